// Readiness (`GET /readyz`): a node is ready when every check registered with it passes. Each part of a node
// registers what it needs: the store is open, PostgreSQL answers, its schema is this version's, the queue is
// started; a worker's own address is fit to be used (its self-check). A check gives undefined when all is
// well, or what is wrong in words; one that throws or takes longer than the timeout fails with that.
export type ReadinessCheck = () => string | undefined | Promise<string | undefined>;

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** What is wrong, when it is not ok. */
  readonly detail?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: readonly CheckResult[];
}

/** How long one check may take before it counts as failed. */
export const CHECK_TIMEOUT_MS = 3000;

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();

  /** Adds (or replaces) the check `name`; gives the function that removes it. */
  register(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
    };
  }

  get names(): readonly string[] {
    return [...this.checks.keys()];
  }

  /** Runs every check at once, each within `timeoutMs`. */
  async run(timeoutMs = CHECK_TIMEOUT_MS): Promise<ReadinessReport> {
    const results = await Promise.all(
      [...this.checks].map(async ([name, check]): Promise<CheckResult> => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
        });
        try {
          const problem = await Promise.race([Promise.resolve().then(check), timeout]);
          return problem === undefined ? { name, ok: true } : { name, ok: false, detail: problem };
        } catch (error) {
          return { name, ok: false, detail: (error as Error).message || String(error) };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return { ready: results.every((result) => result.ok), checks: results };
  }
}
