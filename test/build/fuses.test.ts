// The packaging config flips Electron's fuses (issue 14), with the names electron-builder's own schema
// knows: a misspelt option would fail packaging, or worse, be ignored.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/browserApp.js';

const require = createRequire(import.meta.url);
// js-yaml, a declared devDependency: the version electron-builder reads this file with (no types: it is required).
const yaml = require('js-yaml') as { load(text: string): unknown };

describe('the packaging config', () => {
  const config = yaml.load(readFileSync(join(ROOT, 'build', 'electron-builder.yml'), 'utf8')) as {
    electronFuses?: Record<string, unknown>;
    asar?: unknown;
  };

  it('sets the fuses: no Node mode, inspector or NODE_OPTIONS; cookies encrypted; app only from a checked asar', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeCliInspectArguments: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableCookieEncryption: true,
      onlyLoadAppFromAsar: true,
      enableEmbeddedAsarIntegrityValidation: true,
    });
    // OnlyLoadAppFromAsar needs the app in an asar: packaging must not turn it off.
    expect(config.asar).not.toBe(false);
  });

  it('names only options electron-builder knows', () => {
    const scheme = JSON.parse(readFileSync(require.resolve('app-builder-lib/scheme.json'), 'utf8')) as {
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    const known = Object.keys(scheme.definitions.FuseOptionsV1.properties);
    for (const name of Object.keys(config.electronFuses ?? {})) expect(known, name).toContain(name);
  });
});
