/**
 * `window.openrouterDelegate`, defined by the Electron preload (src-main/electron/preload.ts) and absent
 * when the page is served over loopback HTTP.
 */
import type { ContractApi } from '../../src-main/contract/api.js';

declare global {
  interface Window {
    readonly openrouterDelegate?: ContractApi;
  }
}

export {};
