// Several nodes of a team server on one machine share one data folder (docs/team-server.md gives every node
// `--data-dir /var/lib/mailsieve`). Each works in a folder of its own and removes only the work of nodes that
// have gone: a node (re)started while another plans a list leaves that plan alone, and a killed node's work
// folder is removed by the next node to start.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { tempDir } from '../helpers/service.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { getStatus, submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let db: pg.Pool;
const shared = tempDir('mailsieve-shared-');
const inShared = ['--data-dir', shared.path];

beforeAll(async () => {
  team = await startTeam();
  db = new pg.Pool({ connectionString: team.database, max: 2 });
  db.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await team?.close();
  shared.remove();
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const workFolders = () =>
  readdirSync(join(shared.path, 'lists', 'work')).filter((name) => !name.endsWith('.lock'));

describe('nodes sharing one data folder', { timeout: 240_000 }, () => {
  it('plans a list undisturbed while another node sharing the folder restarts', async () => {
    let api: TeamProcess = await team.api(inShared);
    const workers = await Promise.all([
      team.worker('127.0.0.2', [...inShared, '--part-rows', '50000']),
      team.worker('127.0.0.3', [...inShared, '--part-rows', '50000']),
    ]);
    const key = await team.key(['--checks', 'offline']);
    const rows = 400_000;
    const body = `email,n\n${Array.from({ length: rows }, (_, i) => `person${i}@example${i % 97}.com,${i}`).join('\n')}\n`;
    const sent = await submit(api.url, key, body, { query: { header: 'true' }, as: 'text' });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    // A worker plans it (the API node runs no list work): restart the API node meanwhile.
    await until('the plan to start', async () => {
      const { rows: found } = await db.query(
        `SELECT 1 FROM lists WHERE id = $1 AND status = 'Processing' AND plan IS NULL`,
        [id],
      );
      return found.length > 0;
    });
    await api.stop();
    api = await team.api(inShared);
    const { rows: during } = await db.query<{ planning: boolean }>(
      'SELECT plan IS NULL AS planning FROM lists WHERE id = $1',
      [id],
    );
    expect(during[0]?.planning, 'the node restarted before the plan ended').toBe(true);
    let status = '';
    await until('the list to end', async () => {
      const answer = await getStatus(api.url, key, id);
      const list = listResourceSchema.parse(answer.json());
      status = list.status;
      return ['Results', 'Invalid', 'Error'].includes(list.status);
    });
    expect(status).toBe('Results');
    // Planned once: no attempt failed for want of its files.
    const { rows: record } = await db.query<{ attempts: number }>(
      'SELECT attempts FROM lists WHERE id = $1',
      [id],
    );
    expect(record[0]?.attempts).toBe(1);

    // A node killed outright leaves its folder; the next node to start removes it, and only it.
    const folders = workFolders();
    expect(folders).toHaveLength(3);
    const killed = workers[0];
    const pid = killed.child.pid!;
    await killed.kill();
    await team.worker('127.0.0.4', inShared);
    const after = workFolders();
    expect(after.some((name) => name.startsWith(`${pid}-`))).toBe(false);
    expect(after).toHaveLength(3);
    for (const name of folders.filter((folder) => !folder.startsWith(`${pid}-`)))
      expect(existsSync(join(shared.path, 'lists', 'work', name))).toBe(true);
  });
});
