// The block lists this machine's mailbox checks met (migrations/0130-block-lists.ts): written as the verifier
// meets them (service/http/app.ts passes recordBlockList to it), read by `mailsieve doctor`.
import type { BlockListMet } from '../engine/online/classify.js';
import { statement } from './statements.js';
import type { ServiceDb } from './db.js';

export function recordBlockList(db: ServiceDb, met: BlockListMet): void {
  statement(
    db,
    `INSERT INTO met_block_lists (list, source, host, reply, first_at, last_at, times)
     VALUES (@list, @source, @host, @reply, @at, @at, 1)
     ON CONFLICT (list, source) DO UPDATE SET host = excluded.host, reply = excluded.reply,
       last_at = excluded.last_at, times = times + 1`,
  ).run({ ...met });
}

export interface BlockListRecord extends Omit<BlockListMet, 'at'> {
  readonly firstAt: string;
  readonly lastAt: string;
  readonly times: number;
}

/** The block lists met since `since` (ISO time), latest first. */
export function blockListsMetSince(db: ServiceDb, since: string): BlockListRecord[] {
  return statement(
    db,
    `SELECT list, source, host, reply, first_at AS firstAt, last_at AS lastAt, times FROM met_block_lists
     WHERE last_at >= ? ORDER BY last_at DESC`,
  ).all(since) as BlockListRecord[];
}
