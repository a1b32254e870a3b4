// The team server's database URL is never printed with its password (issue 27, point 9): not when it parses,
// not when a password with '/', '#', '?' or '@' makes it something else or nothing at all, not in the words of
// a command that refuses it.
import { describe, expect, it } from 'vitest';
import { checkDatabaseUrl, DatabaseUrlProblem, describeDatabase } from '../../service/pg/url.js';
import { runCli } from '../helpers/cli.js';

const SECRET = 'Zq9secret';
const URLS = [
  `postgres://mailsieve:${SECRET}@db.internal:5432/mailsieve`,
  `postgres://mailsieve:${SECRET}/x@db.internal:5432/mailsieve`,
  `postgres://mailsieve:1234/${SECRET}@db.internal:5432/mailsieve`,
  `postgres://mailsieve:12#${SECRET}@db.internal/mailsieve`,
  `postgres://mailsieve:${SECRET}#x@db.internal/mailsieve`,
  `postgres://mailsieve:a@${SECRET}@db.internal/mailsieve`,
  `postgres://mailsieve:${SECRET}?@db.internal/mailsieve`,
  `postgres://db.internal/mailsieve?user=mailsieve&password=${SECRET}`,
  `mysql://mailsieve:${SECRET}@db.internal/mailsieve`,
  `not a url ${SECRET}@db.internal`,
];

describe('the database URL in words', () => {
  it('never shows the password, whatever the URL', () => {
    for (const url of URLS) {
      expect(describeDatabase(url), url).not.toContain(SECRET);
      try {
        checkDatabaseUrl(url);
      } catch (error) {
        expect(error, url).toBeInstanceOf(DatabaseUrlProblem);
        expect((error as Error).message, url).not.toContain(SECRET);
      }
    }
    expect(describeDatabase(URLS[0])).toBe('postgres://mailsieve:***@db.internal:5432/mailsieve');
  });

  it('refuses a password that is not percent-encoded, in words that keep it', () => {
    for (const url of URLS.slice(1, 7)) expect(() => checkDatabaseUrl(url), url).toThrow(/percent-encoded/);
    expect(() => checkDatabaseUrl(`postgres://mailsieve:${encodeURIComponent('a/b#c')}@db/x`)).not.toThrow();
  });

  it('keeps it out of what the commands print', async () => {
    for (const url of URLS.slice(1)) {
      const result = await runCli(['keys', 'list', '--database', url]);
      expect(result.code, url).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`, url).not.toContain(SECRET);
    }
  });
});
