// Every unit test file runs with an app home of its own (MAILSIEVE_HOME, inherited by the CLI processes it
// starts): `mailsieve clean` keeps its runs in the app home's job history, and a test must never write into
// the machine's real one, nor share one with the test files running beside it. A test that sets
// MAILSIEVE_HOME itself keeps its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

if (!process.env.MAILSIEVE_HOME) {
  const home = mkdtempSync(join(tmpdir(), 'mailsieve-home-'));
  process.env.MAILSIEVE_HOME = home;
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    delete process.env.MAILSIEVE_HOME;
  });
}
