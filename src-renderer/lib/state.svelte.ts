/**
 * What several pages show, loaded once and kept current from service events (never by polling):
 * settings, keys, balance, the job list, the service's own status, and whether it is reachable.
 * Page-specific data (the model search, a job's tail, Claude Code's registration) stays in its page.
 */
import { contractErrorParts } from '../../src-main/contract/api.js';
import type { ContractEvent } from '../../src-main/contract/api.js';
import type { Balance, JobList, JobRecord, SecretsStatus, ServiceStatus, Settings } from '../../src-main/contract/index.js';
import { api, onConnection } from './host.js';

/** A failed call's message, as the page shows it (the code stays for tests and logic). */
export function errorText(error: unknown): string {
  return contractErrorParts(error).message;
}

export function errorCode(error: unknown): string | null {
  return contractErrorParts(error).code;
}

class ServiceState {
  status = $state<ServiceStatus | null>(null);
  settings = $state<Settings | null>(null);
  secrets = $state<SecretsStatus | null>(null);
  balance = $state<Balance | null>(null);
  jobs = $state<JobList | null>(null);
  /** False while the service cannot be reached (the HTTP host while the service restarts). */
  connected = $state(true);
  /** The HTTP host's link is dead for good (the service restarted with a new token, or another server answers). */
  stale = $state(false);
  /** Why the first load failed, when it did. */
  problem = $state<string | null>(null);
  loaded = $state(false);
  /** The host reports its connection itself (the HTTP host); then only its reports say whether we are connected. */
  private connectionReported = false;
  private readonly jobListeners = new Set<(job: JobRecord) => void>();
  private jobsTimer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  /**
   * Events counted as they arrive, so that a read answered before one of them cannot undo it: the answer and the event
   * come by different connections, and on a loaded machine the older answer can be handled last (a settings file
   * broken by hand while the page loaded stayed unshown: tests/renderer/delegation.test.ts).
   */
  private settingsEvents = 0;
  private problemEvents = 0;
  private problemNow: string | undefined;

  /** Loads everything and follows events; safe to call more than once. */
  start(): void {
    if (this.started) return;
    this.started = true;
    api.onEvent((event) => this.onEvent(event));
    onConnection((state) => {
      this.connectionReported = true;
      const wasDown = !this.connected;
      const connected = state === 'connected';
      this.connected = connected;
      this.stale = state === 'stale';
      // Back after a restart: what we hold may be stale in every part.
      if (connected && wasDown) void this.reload();
    });
    void this.reload();
  }

  async reload(): Promise<void> {
    const [settingsBefore, problemsBefore] = [this.settingsEvents, this.problemEvents];
    const results = await Promise.allSettled([
      api['service.status']().then((v) => (this.status = this.problemEvents === problemsBefore ? v : { ...v, settingsProblem: this.problemNow })),
      api['settings.get']().then((v) => {
        if (this.settingsEvents === settingsBefore) this.settings = v;
      }),
      api['secrets.status']().then((v) => (this.secrets = v)),
      api['balance.get']({ refresh: false }).then((v) => (this.balance = v)),
      this.reloadJobs(),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    this.problem = failed ? errorText(failed.reason) : null;
    // Only a host that says nothing of its connection (Electron's) is judged by its answers. The HTTP host
    // reports each change once: answers that arrive after it said "away" must not say "connected" again, or
    // the banner would stay hidden while the service is gone (a loaded CI run showed it: tests/renderer/connection).
    if (!this.connectionReported) {
      if (failed && errorCode(failed.reason) === 'unavailable') this.connected = false;
      else if (!failed) this.connected = true;
    }
    this.loaded = true;
  }

  async reloadJobs(): Promise<void> {
    this.jobs = await api['jobs.list']({ limit: 200 });
  }

  /** Hears every job change (the Jobs page follows the job it shows). */
  onJob(listener: (job: JobRecord) => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  private onEvent(event: ContractEvent): void {
    switch (event.event) {
      case 'settings.changed':
        this.settingsEvents += 1;
        this.settings = event.data;
        break;
      case 'balance.changed':
        this.balance = event.data;
        break;
      case 'settings.problem':
        // The status holds it for every page (the file was broken by hand, or fixed, while the page is open); a status
        // still on its way takes it when it comes.
        this.problemEvents += 1;
        this.problemNow = event.data.problem ?? undefined;
        if (this.status) this.status = { ...this.status, settingsProblem: event.data.problem ?? undefined };
        break;
      case 'secrets.changed':
        this.secrets = event.data;
        break;
      case 'job.changed':
        for (const listener of this.jobListeners) listener(event.data.job);
        // Many changes arrive together (a job's costs, then its end): one list reload for all of them.
        if (this.jobsTimer === null) {
          this.jobsTimer = setTimeout(() => {
            this.jobsTimer = null;
            void this.reloadJobs().catch(() => undefined);
          }, 150);
        }
        break;
    }
  }
}

export const service = new ServiceState();
