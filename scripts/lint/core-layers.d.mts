/** Types of core-layers.mjs (plain JavaScript, so eslint.config.js can load it), for the tests. */
export interface CoreLayerZone {
  /** A folder of core … */
  target: string;
  /** … may not import this one. */
  from: string;
  message: string;
}

export function coreLayerZones(coreDir: string, layers: readonly string[], where?: string, options?: { rootFiles?: boolean }): CoreLayerZone[];
