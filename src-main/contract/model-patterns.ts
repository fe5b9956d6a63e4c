/** Model ids and the patterns of the allow- and blocklists. Pure: the settings schema uses it. */

/** `vendor` of `vendor/model` or of the alias `~vendor/model-latest`. */
function vendorOf(id: string): string {
  const slash = id.indexOf('/');
  const vendor = slash < 0 ? id : id.slice(0, slash);
  return vendor.startsWith('~') ? vendor.slice(1) : vendor;
}

/**
 * Exact id, or `vendor/*` for all of a vendor's models. `vendor/*` also covers that vendor's
 * `~vendor/…-latest` aliases (a blocked vendor must not come back through an alias); `~vendor/*`
 * covers only the aliases. Case-insensitive, as OpenRouter ids are.
 */
export function matchesPattern(id: string, pattern: string): boolean {
  const wantedId = id.trim().toLowerCase();
  const wanted = pattern.trim().toLowerCase();
  if (!wanted.endsWith('/*')) return wantedId === wanted;
  const patternVendor = wanted.slice(0, -2);
  if (patternVendor.startsWith('~')) return wantedId.startsWith(`${patternVendor}/`);
  return wantedId.includes('/') && vendorOf(wantedId) === patternVendor;
}
