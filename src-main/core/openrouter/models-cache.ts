/**
 * The model catalog, cached in memory and on disk (Locations.modelsCacheFile), so listing models
 * is instant and still works when OpenRouter is not reachable: a failed refresh serves the last
 * good copy and says how old it is.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ServiceError } from '../../contract/protocol.js';
import { formatAge } from '../../common/format.js';
import { parseModelsBody } from '../catalog/parse.js';
import type { CatalogModel } from '../catalog/parse.js';
import type { OpenRouterClient } from './client.js';

export interface ModelsCacheDeps {
  client: Pick<OpenRouterClient, 'listModels'>;
  file: string;
  ttlMs: number;
  now?: () => number;
}

export interface CatalogSnapshot {
  models: CatalogModel[];
  fetchedAt: string | null;
  ageSeconds: number | null;
  /** True when a refresh failed and an older copy is served. */
  stale: boolean;
  warning?: string;
}

interface CacheEntry {
  fetchedAtMs: number;
  /** Parsed once; every query reuses this array. */
  models: CatalogModel[];
}

interface FetchOutcome {
  entry: CacheEntry;
  /** Set when the fresh list could not be saved to disk. */
  warning?: string;
}

function withoutFinalPeriod(text: string): string {
  return text.endsWith('.') ? text.slice(0, -1) : text;
}

export class ModelsCache {
  private readonly client: Pick<OpenRouterClient, 'listModels'>;
  private readonly file: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private entry: CacheEntry | null = null;
  private inFlight: Promise<FetchOutcome> | null = null;
  private diskLoad: Promise<void> | null = null;

  constructor(deps: ModelsCacheDeps) {
    this.client = deps.client;
    this.file = deps.file;
    this.ttlMs = deps.ttlMs;
    this.now = deps.now ?? Date.now;
  }

  async get(options: { refresh?: boolean } = {}): Promise<CatalogSnapshot> {
    await this.loadDiskOnce();
    const cached = this.entry;
    if (cached && !options.refresh && this.now() - cached.fetchedAtMs < this.ttlMs) return this.snapshot(cached);
    try {
      const outcome = await this.refresh();
      return this.snapshot(outcome.entry, outcome.warning === undefined ? {} : { warning: outcome.warning });
    } catch (error) {
      if (!(error instanceof ServiceError) || !this.entry) throw error;
      return this.snapshot(this.entry, { stale: true, warning: this.staleWarning(this.entry, error) });
    }
  }

  /** Concurrent first calls share one read; a missing file is looked for again on the next call. */
  private loadDiskOnce(): Promise<void> {
    if (this.entry) return Promise.resolve();
    this.diskLoad ??= this.readDisk().then((entry) => {
      this.entry ??= entry;
      this.diskLoad = null;
    });
    return this.diskLoad;
  }

  /** One fetch at a time: concurrent callers share it. */
  private refresh(): Promise<FetchOutcome> {
    this.inFlight ??= this.fetchAndStore().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async fetchAndStore(): Promise<FetchOutcome> {
    const body = await this.client.listModels();
    const entry: CacheEntry = { fetchedAtMs: this.now(), models: parseModelsBody(body) };
    this.entry = entry;
    try {
      await this.writeDisk({ fetchedAt: new Date(entry.fetchedAtMs).toISOString(), body });
      return { entry };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'write failed';
      return { entry, warning: `The model list was fetched but could not be saved to ${this.file} (${code}); it will be fetched again next time.` };
    }
  }

  private snapshot(entry: CacheEntry, extra: { stale?: boolean; warning?: string } = {}): CatalogSnapshot {
    const snapshot: CatalogSnapshot = {
      models: entry.models,
      fetchedAt: new Date(entry.fetchedAtMs).toISOString(),
      ageSeconds: this.ageSeconds(entry),
      stale: extra.stale ?? false,
    };
    if (extra.warning !== undefined) snapshot.warning = extra.warning;
    return snapshot;
  }

  private ageSeconds(entry: CacheEntry): number {
    return Math.max(0, Math.floor((this.now() - entry.fetchedAtMs) / 1000));
  }

  private staleWarning(entry: CacheEntry, error: ServiceError): string {
    return `Could not refresh the model list (${withoutFinalPeriod(error.message)}); showing the copy fetched ${formatAge(this.ageSeconds(entry))}.`;
  }

  /** The disk copy, or null when there is none or it cannot be used (it is only a cache). */
  private async readDisk(): Promise<CacheEntry | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return null;
    }
    try {
      const saved = JSON.parse(text) as { fetchedAt?: unknown; body?: unknown };
      const fetchedAtMs = typeof saved.fetchedAt === 'string' ? Date.parse(saved.fetchedAt) : Number.NaN;
      if (Number.isNaN(fetchedAtMs)) return null;
      return { fetchedAtMs, models: parseModelsBody(saved.body) };
    } catch {
      return null;
    }
  }

  /** Temp file in the same directory, then rename: a reader never sees half a file. */
  private async writeDisk(content: { fetchedAt: string; body: unknown }): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temp, JSON.stringify(content), { mode: 0o600 });
      await rename(temp, this.file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}
