declare const __APP_VERSION__: string | undefined;

/** Replaced at build time; the fallback serves tests that run the sources directly. */
export const APP_VERSION: string = typeof __APP_VERSION__ === 'string' ? __APP_VERSION__ : '0.0.0-dev';
