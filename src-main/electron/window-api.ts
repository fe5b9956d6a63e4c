/**
 * `window.openrouterDelegate` for the settings page's code, as a global declaration: the renderer
 * may import only the contract (eslint.config.js), so its tsconfig lists this file instead of
 * importing it. No runtime code.
 */
import type { API_GLOBAL, ContractApi } from './contract-api.js';

declare global {
  interface Window {
    readonly openrouterDelegate: ContractApi;
  }
}

type Holds<T extends true> = T;
/** Fails to compile if the global's name above and API_GLOBAL (what the preload exposes) ever differ. */
export type GlobalNameAgrees = Holds<typeof API_GLOBAL extends keyof Window ? true : false>;
