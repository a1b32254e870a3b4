// What a node does that its operator may want to count or read, published on node:diagnostics_channel: the
// engine and the list pipeline publish (a check of `hasSubscribers`, nothing more, when nobody listens: the
// desktop's embedded service), the metrics (metrics.ts) and the log (log.ts) of `serve` and `worker`
// subscribe. Channels are per process (and per thread): a node is a process. See docs/operations.md.
import { channel, type Channel } from 'node:diagnostics_channel';

/** How a mail server refused this machine: too many connections at once, too often, its identity, a block. */
export type RefusalKind = 'concurrency' | 'rate' | 'policy' | 'block';

/** How a conversation with a mail server went: it was held, or why it could not be. */
export type ConversationOutcome = 'ok' | 'refused' | 'deferred' | 'unreachable' | 'timeout' | 'failed';

/** A step of a list's life, for the log (docs/operations.md "Logs"). */
export type ListEventName = 'accepted' | 'planned' | 'part done' | 'finished' | 'failed';

export interface OpsEvents {
  /** A conversation with a mail server was opened (or could not be), from `sourceAddress` ('' the system's). */
  'smtp.conversation': { sourceAddress: string; host: string; outcome: ConversationOutcome };
  /** A mail server refused this machine; `detail` is the server's reply (never an address being checked). */
  'smtp.refusal': {
    sourceAddress: string;
    host: string;
    kind: RefusalKind;
    detail: string;
    /** The first refusal since this host last talked to this machine (the log says so once). */
    isNew: boolean;
  };
  /** A mail server that had refused this machine held a conversation again. */
  'smtp.recovered': { sourceAddress: string; host: string };
  /** Rows whose checks ended (a part of a list), at `level`; `unknown`: those left unknown, by cause. */
  rows: {
    level: string;
    rows: number;
    unknown: readonly { readonly cause: string; readonly count: number }[];
  };
  list: {
    event: ListEventName;
    listId: number;
    keyId?: number;
    /** The part done (from 0), or how many parts a plan made. */
    part?: number;
    parts?: number;
    records?: number;
    status?: string;
    reason?: string;
  };
  /** A request refused for its key's quota (403) or rate limit (429). */
  'quota.refused': { keyId: number };
  'rate.limited': { keyId: number };
}

export type OpsEventName = keyof OpsEvents;

const channels = new Map<OpsEventName, Channel>();

function channelOf(name: OpsEventName): Channel {
  let found = channels.get(name);
  if (!found) channels.set(name, (found = channel(`mailsieve:${name}`)));
  return found;
}

/** Publishes an event; costs a property read when nobody subscribes. */
export function publish<K extends OpsEventName>(name: K, event: OpsEvents[K]): void {
  const target = channelOf(name);
  if (target.hasSubscribers) target.publish(event);
}

/** Whether anyone listens (to skip building an event that costs something to build). */
export function isObserved(name: OpsEventName): boolean {
  return channelOf(name).hasSubscribers;
}

/** Subscribes to an event; gives the unsubscribe. */
export function subscribe<K extends OpsEventName>(
  name: K,
  listener: (event: OpsEvents[K]) => void,
): () => void {
  const target = channelOf(name);
  const onMessage = (message: unknown) => listener(message as OpsEvents[K]);
  target.subscribe(onMessage);
  return () => void target.unsubscribe(onMessage);
}
