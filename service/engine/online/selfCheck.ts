// A node's check of its own source address (addressCheck.ts), run when the node starts and again every hour
// (listings come and go), its latest state kept for whoever reports on the node: its log, its row in `nodes`
// (`mailsieve status`), its readiness. A listed address makes the node not ready; an address that could not be
// checked (no DNS) does not: "could not check" is not "listed".
import {
  checkSourceAddress,
  type AddressCheck,
  type AddressCheckOptions,
  type SelfCheckState,
} from './addressCheck.js';

export const SELF_CHECK_EVERY_MS = 3_600_000;

export class AddressSelfCheck {
  private current: SelfCheckState;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<AddressCheck> | undefined;

  /** `options` undefined: the node has no address of its own to check (`reason` says why). */
  constructor(
    private readonly options: AddressCheckOptions | undefined,
    reason = 'no source address was given',
  ) {
    this.current = options ? { status: 'checking', address: options.address } : { status: 'not-run', reason };
  }

  get state(): SelfCheckState {
    return this.current;
  }

  /** For a readiness check: not ready while the address is on a block list. */
  readiness(): { readonly ok: boolean; readonly detail: string } {
    const state = this.current;
    if (state.status === 'not-run') return { ok: true, detail: `not checked: ${state.reason}` };
    if (state.status === 'checking') return { ok: true, detail: `checking ${state.address}` };
    const listed = state.check.block_lists.filter((list) => list.status === 'listed');
    if (listed.length > 0)
      return {
        ok: false,
        detail: `${state.check.address} is listed on ${listed.map((list) => list.zone).join(', ')}`,
      };
    return {
      ok: true,
      detail: state.check.ok
        ? `${state.check.address}: reverse DNS confirmed, not listed`
        : `${state.check.address}: ${state.check.problems.length} problem(s), not listed`,
    };
  }

  /** Checks now; then every `everyMs` (0: once), calling `onCheck` with each result. */
  start(
    onCheck: (check: AddressCheck) => void,
    everyMs = SELF_CHECK_EVERY_MS,
  ): Promise<AddressCheck> | undefined {
    if (!this.options) return undefined;
    const run = () => {
      const options = this.options!;
      this.running = checkSourceAddress(options).then((check) => {
        this.current = { status: 'done', check };
        onCheck(check);
        return check;
      });
      return this.running;
    };
    if (everyMs > 0) {
      this.timer = setInterval(() => void run().catch(() => undefined), everyMs);
      this.timer.unref();
    }
    return run();
  }

  /** Stops checking again (a check under way ends within its DNS time limits). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}

export interface NodeSelfCheckSettings {
  /** The node's source address; without one there is no address of its own to check. */
  readonly sourceAddress?: string | undefined;
  readonly heloName?: string | undefined;
  readonly dnsServers?: AddressCheckOptions['dnsServers'];
  /** Block list zones (default DEFAULT_DNSBL_ZONES). */
  readonly dnsbl?: readonly string[] | undefined;
  /** The node's highest checks level: a node that never goes online has nothing to check. */
  readonly level: 'offline' | 'dns' | 'smtp';
  /** How often the check runs again (default hourly; 0: once). */
  readonly everyMs?: number;
}

/** A verifier node's self-check, started (when it has an address to check); `onCheck` hears each result. */
export function startNodeSelfCheck(
  settings: NodeSelfCheckSettings,
  onCheck: (check: AddressCheck) => void,
): AddressSelfCheck {
  const selfCheck =
    settings.level === 'offline'
      ? new AddressSelfCheck(undefined, 'this node checks offline only')
      : settings.sourceAddress
        ? new AddressSelfCheck({
            address: settings.sourceAddress,
            heloName: settings.heloName,
            dnsServers: settings.dnsServers,
            dnsbl: settings.dnsbl,
          })
        : new AddressSelfCheck(
            undefined,
            'no source address was given (mailsieve doctor --source-address IP checks one)',
          );
  // A check that fails outright (it should not: every lookup is bounded) leaves the state at "checking".
  void selfCheck.start(onCheck, settings.everyMs)?.catch(() => undefined);
  return selfCheck;
}
