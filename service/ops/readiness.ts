// Readiness (`GET /readyz`): a node is ready when every check registered with it passes. Each part of a node
// registers what it needs: the store is open, PostgreSQL answers, its schema is this version's, the queue is
// started; a worker's own address is fit to be used (its self-check). A check gives undefined when all is
// well, or what is wrong in words; one that throws or takes longer than the timeout fails with that.
//
// Anyone who reaches the port may ask, so what a check says there names no address, user or database: a check
// that knows more (PostgreSQL's URL, an error's own message) gives it as `logged`, for the node's log only.
export type ReadinessCheck = () =>
  string | ReadinessProblem | undefined | Promise<string | ReadinessProblem | undefined>;

/** What is wrong: in words anyone may read, and what only the node's log is told. */
export interface ReadinessProblem {
  readonly detail: string;
  readonly logged: string;
}

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** What is wrong, when it is not ok, in words that name no address. */
  readonly detail?: string;
  /** What the node's log is told of it (the check's own words, an error's message); never answered. */
  readonly logged?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: readonly CheckResult[];
}

/** The report as `GET /readyz` answers it: without what is for the node's log only. */
export function publicReport(report: ReadinessReport): string {
  return JSON.stringify({
    ready: report.ready,
    checks: report.checks.map(({ name, ok, detail }) =>
      detail === undefined ? { name, ok } : { name, ok, detail },
    ),
  });
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
          if (problem === undefined) return { name, ok: true };
          return typeof problem === 'string'
            ? { name, ok: false, detail: problem }
            : { name, ok: false, detail: problem.detail, logged: problem.logged };
        } catch (error) {
          // An error's own message may name an address (connect ECONNREFUSED 10.0.0.5:5432): the log's alone.
          return {
            name,
            ok: false,
            detail: "the check failed (the node's log says why)",
            logged: (error as Error).message || String(error),
          };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return { ready: results.every((result) => result.ok), checks: results };
  }
}
