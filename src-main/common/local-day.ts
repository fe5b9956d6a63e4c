/** Calendar days as budgets count them: the service's daily budget and the tray's once-a-day alerts agree. */

/** The local calendar day of a timestamp, e.g. "2026-11-30". */
export function localDayKey(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
