// pg-boss 10 completes or fails a job after its handler without awaiting the query (timgit/pg-boss#577): when
// PostgreSQL is down at that moment (restarted, failing over), the rejection is unhandled and ends the node's
// process. Here the promise of each call gets a handler that reports the failure as pg-boss's own 'error'
// event; a caller that awaits it still sees it fail. The job is left as it was: it expires and is taken again.
// (The manager is pg-boss's internal module; the version is pinned in package-lock.json and the team tests
// restart PostgreSQL under working nodes.)
// Imported, not required: the CLI's bundle then holds one copy of the module, the one pg-boss itself uses.
import Manager from 'pg-boss/src/manager.js';

type ManagerPrototype = (typeof Manager)['prototype'];

let isPatched = false;

export function handleBossCompletions(): void {
  if (isPatched) return;
  isPatched = true;
  for (const name of ['complete', 'fail'] as const) {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its manager as `this` below
    const original = Manager.prototype[name];
    Manager.prototype[name] = function (this: ManagerPrototype, ...args: unknown[]) {
      const done = original.apply(this, args);
      done.catch((error: unknown) => this.emit('error', error));
      return done;
    };
  }
}
