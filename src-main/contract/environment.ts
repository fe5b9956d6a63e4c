/** Environment variables the app reads (docs/ARCHITECTURE.md §7); one place, so every runtime agrees. */
export const ENV = {
  /** One folder for all config, state and runtime files; two homes are fully isolated. */
  home: 'OPENROUTER_DELEGATE_HOME',
  /** OpenRouter API root (default https://openrouter.ai/api). */
  baseUrl: 'OPENROUTER_BASE_URL',
  /** Key override: beats the keychain. */
  apiKey: 'OPENROUTER_API_KEY',
  /** Path of the `claude` executable. */
  claude: 'OPENROUTER_DELEGATE_CLAUDE',
  /** Set in delegated sessions: a bridge started inside one refuses to run (no recursion). */
  depth: 'OPENROUTER_DELEGATE_DEPTH',
  /**
   * Set in a delegated session to its job's id, and so inherited by everything it starts: when the
   * delegate dies, what its tools left running (in sessions of their own) is still found and ended.
   */
  job: 'OPENROUTER_DELEGATE_JOB',
  /** The Node.js the packaged launchers (and a checkout's tray app) run the bridge and CLIs with. */
  node: 'OPENROUTER_DELEGATE_NODE',
  /** `off`: no watchdog brings a killed service back (tests that restart services themselves). */
  watchdog: 'OPENROUTER_DELEGATE_WATCHDOG',
  /** The same, by its name until 2026-12 (still read). */
  watchdogFormerName: 'OPENROUTER_DELEGATE_KEEPER',
} as const;
