// The IPC sender check: the frame's URL parsed, scheme and host compared exactly.
import { describe, expect, it } from 'vitest';
import { isAppFrameUrl } from '../../../electron/main/senderOrigin.js';

describe('isAppFrameUrl', () => {
  it('takes the app’s own pages', () => {
    expect(isAppFrameUrl('app://mailsieve/', 'app://mailsieve')).toBe(true);
    expect(isAppFrameUrl('app://mailsieve/index.html#/history', 'app://mailsieve')).toBe(true);
  });

  it('refuses look-alikes a string prefix would take, other schemes, and nothing', () => {
    for (const url of [
      'app://mailsieve.evil.example/',
      'app://mailsieve@evil.example/',
      'app://mailsieve:8080/',
      'app://user:pw@mailsieve/',
      'https://mailsieve/',
      'file:///app://mailsieve/',
      'app://evil/app://mailsieve/',
      'not a url',
      '',
      undefined,
    ])
      expect(isAppFrameUrl(url, 'app://mailsieve'), String(url)).toBe(false);
  });
});
