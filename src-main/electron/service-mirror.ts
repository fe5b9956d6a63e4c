/**
 * What the tray app knows of its service (desktop-app.ts): the settings, the key's source, the balance, the jobs
 * queued or running and today's spending. Read once from the calls any client makes, then kept current by the
 * service's events, because the tray and the alerts are drawn from it synchronously on every redraw.
 */
import { isActive } from '../contract/index.js';
import type { Balance, EventName, EventOf, JobRecord, KeySource, Settings } from '../contract/index.js';
import type { ServiceCall } from '../host/service-host.js';
import { errorMessage } from '../common/errors.js';

export interface ServiceMirrorDeps {
  /** The tray's calls to the service, typed by the contract. */
  call: ServiceCall;
  now: () => number;
  log: (line: string) => void;
  /** Whether the app is quitting: then today's spending is not read again. */
  quitting: () => boolean;
  /** Today's spending was read again (after jobs changed). */
  onSpendingRead: () => void;
}

export class ServiceMirror {
  private readonly call: ServiceCall;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly quitting: () => boolean;
  private readonly onSpendingRead: () => void;
  private settingsNow: Settings | null = null;
  private keySourceNow: KeySource = 'none';
  private balanceNow: Balance | null = null;
  private balanceReadAt: number | null = null;
  private readonly active = new Map<string, JobRecord>();
  private spentToday = 0;
  /** Jobs some event has told of: newer than any answer read before it. */
  private readonly heardJobs = new Set<string>();
  private spendingRead: { running: boolean; again: boolean } = { running: false, again: false };

  constructor(deps: ServiceMirrorDeps) {
    this.call = deps.call;
    this.now = deps.now;
    this.log = deps.log;
    this.quitting = deps.quitting;
    this.onSpendingRead = deps.onSpendingRead;
  }

  /** The settings in force; null until the first read. */
  get settings(): Settings | null {
    return this.settingsNow;
  }

  get keySource(): KeySource {
    return this.keySourceNow;
  }

  /** The last balance the service announced; null before the first. */
  get balance(): Balance | null {
    return this.balanceNow;
  }

  /** When that balance was read from OpenRouter (ms); null if never. */
  get balanceAt(): number | null {
    return this.balanceReadAt;
  }

  /** Jobs queued or running, as the last answer or event told of them. */
  get activeJobs(): IterableIterator<JobRecord> {
    return this.active.values();
  }

  get spentTodayUsd(): number {
    return this.spentToday;
  }

  /**
   * The tray's starting picture, from the calls any client makes; the events keep it current from then on.
   * A job some event has told of is as new as this answer or newer, and stays as the event said.
   */
  async readState(): Promise<void> {
    const [settings, secrets, running, queued] = await Promise.all([
      this.call('settings.get', {}),
      this.call('secrets.status', {}).catch(() => null),
      this.call('jobs.list', { state: 'running', limit: 500 }),
      this.call('jobs.list', { state: 'queued', limit: 500 }),
    ]);
    this.settingsNow ??= settings;
    this.keySourceNow = secrets?.apiKey.source ?? 'none';
    for (const job of [running, queued].flatMap((list) => list.conversations.flatMap((c) => c.jobs))) {
      if (!this.heardJobs.has(job.id)) this.active.set(job.id, job);
    }
    this.spentToday = running.spentTodayUsd;
  }

  /** Takes in one service event; returns the job a `job.changed` told of (null for any other event). */
  apply(event: EventName, data: unknown): JobRecord | null {
    if (event === 'settings.changed') {
      this.settingsNow = data as EventOf<'settings.changed'>;
    } else if (event === 'secrets.changed') {
      this.keySourceNow = (data as EventOf<'secrets.changed'>).apiKey.source;
    } else if (event === 'balance.changed') {
      const balance = data as EventOf<'balance.changed'>;
      this.balanceNow = balance;
      this.keySourceNow = balance.keySource;
      if (balance.key !== null) this.balanceReadAt = balance.fetchedAt ? Date.parse(balance.fetchedAt) : this.now();
    } else if (event === 'job.changed') {
      const { job } = data as EventOf<'job.changed'>;
      this.jobChanged(job);
      return job;
    }
    return null;
  }

  private jobChanged(job: JobRecord): void {
    this.heardJobs.add(job.id);
    if (isActive(job.state)) this.active.set(job.id, job);
    else this.active.delete(job.id);
    this.readSpending();
  }

  /** Today's spending, read again after jobs change: one read at a time, and one more if they changed meanwhile. */
  private readSpending(): void {
    if (this.quitting()) return;
    if (this.spendingRead.running) {
      this.spendingRead.again = true;
      return;
    }
    this.spendingRead.running = true;
    this.call('jobs.list', { limit: 1 })
      .then((list) => {
        this.spentToday = list.spentTodayUsd;
        this.onSpendingRead();
      })
      .catch((error: unknown) => this.log(`tray: today's spending: ${errorMessage(error)}`))
      .finally(() => {
        this.spendingRead.running = false;
        if (this.spendingRead.again) {
          this.spendingRead.again = false;
          this.readSpending();
        }
      });
  }
}
