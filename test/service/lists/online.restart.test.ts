// The wait for a retry of temporary failures survives a restart: a list whose greylisted row waits is
// stopped with its service, and the next service on the same folder carries on — the rows already answered
// are not asked again (counted at the mail server), the wait resumes, and the greylisted row ends valid.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startService, type RunningService } from '../../../service/server.js';
import { openServiceDb } from '../../../service/store/db.js';
import { createKey } from '../../../service/store/keys.js';
import { parseDnsServers } from '../../../service/engine/online/index.js';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../../helpers/smtpServer.js';
import { tempDir } from '../../helpers/service.js';
import { SERVERS, zones } from '../engine/online/fixture.js';
import { getResults, getStatus, lines, submit, waitForList } from './helpers.js';

let dns: TestDnsServer;
let farm: MailFarm;
beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 11);
  dns = await startDnsServer(zones(farm));
});
afterAll(async () => {
  await dns.close();
  await farm.close();
});

it('carries on a list waiting for a retry after the service restarts, asking nothing twice', async () => {
  const dir = tempDir('mailsieve-online-restart-');
  const db = openServiceDb(dir.path);
  const parsed = parseDnsServers(dns.address);
  if (!parsed.ok) throw new Error('bad DNS address');
  const start = () =>
    startService({
      dataDir: dir.path,
      db,
      port: 0,
      online: {
        dnsServers: parsed.servers,
        smtpPort: farm.port,
        heloName: 'verifier.mailsieve.test',
        mailFrom: 'probe@mailsieve.test',
        smtpPacingMs: 20,
        smtpIdleMs: 200,
      },
      lists: { retryDelayMs: 1500, maxWaitMs: 60_000, idleMs: 30_000 },
    });
  let service: RunningService = await start();
  try {
    const key = createKey(db, { mode: 'safe_to_send', services: ['validation'], checks: 'smtp' }).key;
    const body = 'email\nalice@users.example.net\ngina@grey.example.net\nnobody@users.example.net\n';
    const submitted = await submit(service.url, key, body, { query: { header: 'true' } });
    const id = submitted.json<{ list_id: number }>().list_id;
    let waiting: ListResource | undefined;
    for (let i = 0; i < 400 && !waiting; i++) {
      const list = listResourceSchema.parse((await getStatus(service.url, key, id)).json());
      if (list.online && list.online.retry_rows > 0) waiting = list;
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(waiting?.online).toMatchObject({ retry_rows: 1, rows_checked: 2, rows_to_check: 3 });
    const asked = () =>
      farm
        .log('mailbox')
        .rcpts.filter(
          (r) => r.address === 'alice@users.example.net' || r.address === 'nobody@users.example.net',
        ).length;
    const askedBefore = asked();
    expect(askedBefore).toBe(2);

    // The service stops during the wait, and starts again on the same folder.
    await service.close();
    service = await start();
    const list = await waitForList(service.url, key, id, 60_000);
    expect(list.status).toBe('Results');
    const results = await getResults(service.url, key, id);
    const rows = lines(results.text).map((line) => line.split(',').slice(0, 3).join(','));
    expect(rows).toEqual([
      'email,Validation Status,Validation Code',
      'alice@users.example.net,valid,50',
      'gina@grey.example.net,valid,50',
      'nobody@users.example.net,invalid,400',
    ]);
    // alice and nobody were answered before the stop: not asked again.
    expect(asked()).toBe(askedBefore);
    expect(list.online).toMatchObject({ retry_rows: 0, rows_checked: 3 });
    expect(list.online!.retry_attempt).toBeGreaterThanOrEqual(1);
  } finally {
    await service.close();
    db.close();
    dir.remove();
  }
}, 90_000);
