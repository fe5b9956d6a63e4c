/**
 * Where `openrouter-mcp-config` reads and changes the settings and keys. Two paths, one set of rules:
 * through the running service (`settings.update`, `secrets.set` …) when one answers, else directly
 * (SettingsStore + updateSettings, storeSecret/removeSecret), which run the same code the service runs.
 * This never starts a service: a service started later reads the file and the keychain.
 */
import { APP_VERSION, ServiceError } from '../../contract/index.js';
import type { DelegateKeyStatus, ModelRow, SecretKind, SecretsStatus, Settings, SettingsPatch } from '../../contract/index.js';
import { IpcClient } from '../../ipc/client.js';
import type { Locations } from '../../platform/locations.js';
import { probeSandbox } from '../../platform/sandbox-probe.js';
import type { SandboxAvailability } from '../../platform/sandbox-probe.js';
import { queryModels } from '../../core/catalog/query.js';
import { OpenRouterClient } from '../../core/openrouter/client.js';
import { ModelsCache } from '../../core/openrouter/models-cache.js';
import { SecretStore } from '../../core/secrets/secret-store.js';
import { removeSecret, storeSecret, validateSecret } from '../../core/service/secret-ops.js';
import { ATTRIBUTION, baseUrlFrom } from '../../core/openrouter/endpoint.js';
import { SettingsStore } from '../../core/settings/store.js';
import { settingsChecks } from '../../core/settings/checks.js';
import { updateSettings } from '../../core/settings/update.js';
import type { UpdatedSettings } from '../../core/settings/update.js';

/** The most rows `models.list` returns: the whole tool-capable catalog fits. */
const CATALOG_LIMIT = 500;

export interface SettingsState {
  settings: Settings;
  file: string;
  /** OPENROUTER_DELEGATE_HOME, or null for the OS default locations. */
  home: string | null;
  /** Why the settings file is not being used (it is broken); changes are refused until it is fixed. */
  problem?: string;
  /** Whose key the delegates use (the running service's answer; absent without one). */
  delegateKey?: DelegateKeyStatus;
}

export interface ModelChoices {
  rows: ModelRow[];
  warning?: string;
}

export interface ConfigBackend {
  /** 'service': through the running service (its pid); 'file': the settings file and keychain directly. */
  readonly via: 'service' | 'file';
  readonly servicePid: number | null;
  state(): Promise<SettingsState>;
  /** Saves a change, checked as the service checks it; `warnings` says what could not be checked. */
  update(patch: SettingsPatch): Promise<UpdatedSettings>;
  secrets(): Promise<SecretsStatus>;
  /** Checks the key with OpenRouter, then stores it; a refused key is not stored. */
  setSecret(kind: SecretKind, value: string): Promise<SecretsStatus>;
  removeSecret(kind: SecretKind): Promise<SecretsStatus>;
  /** Tool-capable models, cheapest first, with the policy's verdict on each. */
  models(): Promise<ModelChoices>;
  /** Whether the sandbox runs delegates' programs: the running service's answer (its PATH is the one that counts), else this machine's. */
  sandbox(): Promise<SandboxAvailability>;
  close(): void;
}

function openRouterClient(env: NodeJS.ProcessEnv): OpenRouterClient {
  return new OpenRouterClient({ baseUrl: baseUrlFrom(env), appTitle: ATTRIBUTION.title, appUrl: ATTRIBUTION.url });
}

/**
 * Asks OpenRouter whether a key is good, without storing it (the interactive flow checks a key as soon
 * as it is typed; saving checks it again). Uses this process's OPENROUTER_BASE_URL.
 */
export function checkKey(env: NodeJS.ProcessEnv, kind: SecretKind, value: string): Promise<void> {
  return validateSecret(openRouterClient(env), kind, value);
}

class ServiceBackend implements ConfigBackend {
  readonly via = 'service' as const;
  constructor(
    private readonly client: IpcClient,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get servicePid(): number {
    return this.client.server.pid;
  }

  async state(): Promise<SettingsState> {
    const [settings, status] = await Promise.all([this.client.call('settings.get', {}), this.client.call('service.status', {})]);
    // The service reports "(OS default locations)" when OPENROUTER_DELEGATE_HOME is not set.
    const home = status.home.startsWith('(') ? null : status.home;
    return {
      settings,
      file: status.paths.settingsFile,
      home,
      ...(status.settingsProblem ? { problem: status.settingsProblem } : {}),
      ...(status.delegateKey ? { delegateKey: status.delegateKey } : {}),
    };
  }

  async update(patch: SettingsPatch): Promise<UpdatedSettings> {
    const { warnings = [], ...settings } = await this.client.call('settings.update', { patch });
    return { settings, warnings };
  }

  secrets(): Promise<SecretsStatus> {
    return this.client.call('secrets.status', {});
  }

  setSecret(kind: SecretKind, value: string): Promise<SecretsStatus> {
    return this.client.call('secrets.set', { kind, value, validate: true });
  }

  removeSecret(kind: SecretKind): Promise<SecretsStatus> {
    return this.client.call('secrets.remove', { kind });
  }

  async models(): Promise<ModelChoices> {
    const report = await this.client.call('models.list', { limit: CATALOG_LIMIT, sort: 'price' });
    return { rows: report.models, ...(report.catalog.warning ? { warning: report.catalog.warning } : {}) };
  }

  async sandbox(): Promise<SandboxAvailability> {
    // A service older than the sandbox does not say; this machine's answer is the next best.
    return (await this.client.call('service.status', {})).sandbox ?? probeSandbox({ env: this.env });
  }

  close(): void {
    this.client.close();
  }
}

class FileBackend implements ConfigBackend {
  readonly via = 'file' as const;
  readonly servicePid = null;
  private readonly store: SettingsStore;
  private readonly secretStore: SecretStore;
  private readonly openRouter: OpenRouterClient;
  private modelsCache: ModelsCache | undefined;

  constructor(
    private readonly locations: Locations,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.store = new SettingsStore({ file: locations.settingsFile });
    this.secretStore = new SecretStore({ service: locations.keychainService, env });
    this.openRouter = openRouterClient(env);
  }

  async state(): Promise<SettingsState> {
    const settings = await this.store.load();
    const problem = this.store.problem;
    return { settings, file: this.locations.settingsFile, home: this.locations.home, ...(problem ? { problem } : {}) };
  }

  update(patch: SettingsPatch): Promise<UpdatedSettings> {
    // The cache is made when the check first asks: by then updateSettings has read the settings file.
    return updateSettings(this.store, patch, settingsChecks({ get: (options) => this.catalog().get(options) }));
  }

  async secrets(): Promise<SecretsStatus> {
    return this.secretStore.status();
  }

  setSecret(kind: SecretKind, value: string): Promise<SecretsStatus> {
    return storeSecret({ secrets: this.secretStore, client: this.openRouter }, kind, value, true);
  }

  async removeSecret(kind: SecretKind): Promise<SecretsStatus> {
    return removeSecret({ secrets: this.secretStore, client: this.openRouter }, kind);
  }

  async models(): Promise<ModelChoices> {
    const settings = await this.store.load();
    const snapshot = await this.catalog().get();
    const result = queryModels(snapshot.models, { sort: 'price', limit: CATALOG_LIMIT }, settings);
    return { rows: result.rows, ...(snapshot.warning ? { warning: snapshot.warning } : {}) };
  }

  sandbox(): Promise<SandboxAvailability> {
    return probeSandbox({ env: this.env });
  }

  /** The model list the service would use: its cache file, kept as long as the settings say. One per run, made once the settings are read. */
  private catalog(): ModelsCache {
    this.modelsCache ??= new ModelsCache({
      client: this.openRouter,
      file: this.locations.modelsCacheFile,
      ttlMs: this.store.current.modelsCacheTtlMinutes * 60_000,
    });
    return this.modelsCache;
  }

  close(): void {}
}

/** The running service when one answers; otherwise the files and the keychain of these locations. */
export async function openBackend(locations: Locations, env: NodeJS.ProcessEnv): Promise<ConfigBackend> {
  try {
    const client = await IpcClient.connect({ locations, clientName: `config-cli/${APP_VERSION}` });
    return new ServiceBackend(client, env);
  } catch (error) {
    // Only "nothing answers" falls back to the files: a service that refuses us (wrong token, other
    // version) is running, and must be fixed rather than worked around.
    if (error instanceof ServiceError && error.code === 'unavailable') return new FileBackend(locations, env);
    throw error;
  }
}
