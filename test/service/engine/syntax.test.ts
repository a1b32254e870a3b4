import { describe, expect, test } from 'vitest';
import { NO_POLICY, checkSyntax, standardise, verifyOffline } from '../../../service/engine/index.js';

const codeOf = (input: string): number => verifyOffline(input, NO_POLICY).code;

// A domain of `length` characters made of valid labels, ending in .com.
function domainOfLength(length: number): string {
  const labels: string[] = [];
  let remaining = length - '.com'.length;
  while (remaining > 0) {
    const size = Math.min(63, remaining - (labels.length > 0 ? 1 : 0));
    labels.push('a'.repeat(size));
    remaining -= size + (labels.length > 1 ? 1 : 0);
  }
  return `${labels.join('.')}.com`;
}

describe('each syntax defect gives its code', () => {
  test.each([
    [100, '', 'empty input'],
    [100, ' \t\r\n ', 'white space only'],
    [110, 'jane\u0000doe@example.com', 'a control character'],
    [110, 'jane\u007f@example.com', 'DEL'],
    [110, 'jane(work)@example.com', 'a comment'],
    [110, '"jane"@example.com', 'a quoted local part'],
    [
      110,
      '"jane doe"@example.com',
      'a quoted local part with a space (quoting is the defect, not the space)',
    ],
    [110, 'ja;ne@example.com', 'a semicolon in the local part'],
    [110, 'me.;@example.com', 'a semicolon after a dot'],
    [110, 'me,you@example.com', 'a comma'],
    [110, 'me:you@example.com', 'a colon'],
    [110, 'me<you@example.com', 'a less-than sign'],
    [110, 'me>you@example.com', 'a greater-than sign'],
    [110, 'me[you@example.com', 'an opening bracket'],
    [110, 'me]you@example.com', 'a closing bracket'],
    [110, 'me"you@example.com', 'a quote inside'],
    [110, 'me)you@example.com', 'a closing parenthesis'],
    [110, 'ja\\ne@example.com', 'a backslash'],
    [110, 'jane\u200b@example.com', 'a zero-width space'],
    [110, 'jane\u202e@example.com', 'a bidirectional control'],
    [110, 'jane\ud800@example.com', 'a lone surrogate'],
    [110, 'jane@exa:mple.com', 'a colon in the domain'],
    [115, 'jane@example..com', 'an empty label'],
    [115, 'jane@.example.com', 'a leading dot in the domain'],
    [115, 'jane@-example.com', 'a label starting with a hyphen'],
    [115, 'jane@example-.com', 'a label ending with a hyphen'],
    [115, 'jane@exa_mple.com', 'an underscore in the domain'],
    [115, 'jane@exa!mple.com', 'punctuation inside the domain'],
    [115, 'jane@localhost', 'a dotless domain'],
    [115, 'jane@[192.0.2.1]', 'an IP literal'],
    [115, 'jane@[IPv6:2001:db8::1]', 'an IPv6 literal'],
    [115, 'jane@192.0.2.1', 'an IP address'],
    [115, 'jane@example.com.', 'a trailing dot'],
    [115, `jane@${'a'.repeat(64)}.com`, 'a label over 63 characters'],
    [115, `j@${'a'.repeat(58)}ü.de`, 'a label of 60 octets in UTF-8 but 66 in its IDNA form'],
    [130, `j@${domainOfLength(254)}`, 'a domain over 253 octets'],
    [
      130,
      `j@${Array(4)
        .fill(`${'a'.repeat(58)}ü`)
        .join('.')}.com`,
      'a domain of 247 octets, 271 in IDNA form',
    ],
    [115, 'jane@ｅｘａｍｐｌｅ.com', 'full-width letters that IDNA would map'],
    [115, 'jane@example。com', 'an ideographic full stop'],
    [115, 'jane@xn--zz.com', 'an xn-- label that does not decode'],
    [120, '.jane@example.com', 'a leading dot in the local part'],
    [120, 'jane.@example.com', 'a trailing dot in the local part'],
    [120, 'ja..ne@example.com', 'two dots in a row in the local part'],
    [125, 'jane@gmail.com', 'Gmail: fewer than 6 letters and digits'],
    [125, 'j.a.n.e.d@gmail.com', 'Gmail: dots do not count towards the length'],
    [125, 'jane_doe@gmail.com', 'Gmail: an underscore'],
    [125, `${'a'.repeat(31)}@gmail.com`, 'Gmail: more than 30 characters'],
    [125, 'jane-doe@googlemail.com', 'Googlemail: a hyphen'],
    [125, '1jane@yahoo.com', 'Yahoo: not starting with a letter'],
    [125, 'jane#doe@yahoo.co.uk', 'Yahoo: a character other than letters, digits, "_" and "."'],
    [125, `j${'a'.repeat(32)}@ymail.com`, 'Yahoo: more than 32 characters'],
    [125, 'jane!doe@outlook.com', 'Microsoft: an exclamation mark'],
    [125, 'jané@hotmail.com', 'Microsoft: a non-ASCII letter'],
    [130, `${'a'.repeat(65)}@example.com`, 'a local part over 64 octets'],
    [130, `${'é'.repeat(33)}@example.com`, 'a local part over 64 octets in UTF-8 (33 characters)'],
    [130, `${'a'.repeat(64)}@${domainOfLength(190)}`, 'an address of 255 octets'],
    [140, '@example.com', 'nothing before the @'],
    [145, 'jane@', 'nothing after the @'],
    [150, 'jane.example.com', 'no @'],
    [155, 'jane@doe@example.com', 'two @'],
    [155, 'jane@@example.com', 'a doubled @'],
    [155, 'jane@example.com <mailto:jane@example.com>', 'an address pasted twice'],
    [200, 'x@foo.notarealtld', 'a TLD not in the root zone'],
    [200, 'jane@example.local', 'a special-use name (.local)'],
    [200, 'jane@in-addr.arpa', 'the infrastructure TLD (.arpa), though in the root zone'],
    [200, 'jane@home.arpa', 'a special-use name under .arpa'],
    [200, 'jane@mail.example', 'a special-use name (.example)'],
    [200, 'jane@mail.invalid', 'a special-use name (.invalid)'],
    [200, 'jane@mail.localhost', 'a special-use name (.localhost)'],
    [200, 'jane@mail.test', 'a special-use name (.test)'],
    [200, 'jane@mail.alt', 'a special-use name (.alt)'],
    [200, 'jane@example.onion', 'a special-use name outside the root zone (.onion)'],
    [200, 'jane@example.ungültig', 'an IDN TLD not in the root zone'],
    [200, 'jane@example.xn--ungltig-p2a', 'the same in ASCII form'],
    [210, '<jane@example.com>', 'angle brackets around the address'],
    [210, 'Jane Doe <jane@example.com>', 'a display name'],
    [210, '"jane@example.com"', 'quotes around the address'],
    [210, '(jane@example.com)', 'parentheses around the address'],
    [210, '[jane@example.com]', 'square brackets around the address'],
    [210, 'jane@example.com,', 'a trailing comma'],
    [210, 'jane@example.com;', 'a trailing semicolon'],
    [210, 'jane@example.com>', 'a stray closing bracket'],
    [210, ',jane@example.com', 'a leading comma'],
    [210, ' test@iana.org', 'a leading space'],
    [210, 'test@iana.org ', 'a trailing space'],
    [210, 'test@iana.org\r\n', 'a trailing CR LF'],
    [210, '\r\n test@iana.org', 'a leading CR LF and space'],
    [210, '\ttest@iana.org', 'a leading tab'],
    [210, 'test@iana.org\n', 'a trailing LF'],
    [210, '\u00a0test@iana.org\u3000', 'Unicode white space around'],
    [210, '\ufefftest@iana.org', 'a byte-order mark before'],
    [210, ' jane doe@example.com ', 'white space around before the space inside'],
    [215, 'jane doe@example.com', 'a space in the local part'],
    [215, 'jane @example.com', 'a space before the @'],
    [215, 'jane@exa mple.com', 'a space in the domain'],
    [215, 'jane\t@example.com', 'a tab'],
    [215, 'jane\r\n doe@example.com', 'folding white space'],
    [215, 'jane\u00a0doe@example.com', 'a no-break space'],
  ])('%i: %j (%s)', (code, input) => {
    expect(codeOf(input)).toBe(code);
  });
});

describe('the most specific defect wins', () => {
  test.each([
    [145, 'jane doe@', 'no domain before the space'],
    [140, '@exa mple.com', 'no username before the space'],
    [155, 'jane @ doe @ example.com', 'two @ before the spaces'],
    [210, '<jane doe@example.com>', 'the brackets before the space'],
    [215, 'jane doe@exa_mple.com', 'the space before the domain character'],
    [130, `${'a'.repeat(70)}(x)@example.com`, 'the length before the character'],
    [110, '.ja(ne@example.com', 'the character before the local part syntax'],
    [120, '.jane@exa_mple.com', 'the local part before the domain'],
    [115, 'jane@exa_mple.notarealtld', 'the domain syntax before the TLD'],
  ])('%i: %j (%s)', (code, input) => {
    expect(codeOf(input)).toBe(code);
  });
});

describe('syntactically sound addresses are code 10', () => {
  test.each([
    ['jane.doe@example.com', 'a plain address'],
    ["o'brien@example.com", 'an apostrophe'],
    ['jane+news@example.com', 'a +tag'],
    ["!#$%&'*+-/=?^_`{|}~@example.com", 'every RFC 5322 atext character'],
    ['x@foo.co.uk', 'a second-level public suffix'],
    ['x@foo.museum', 'a long gTLD'],
    ['x@münchen.de', 'an IDN domain'],
    ['x@MÜNCHEN.DE', 'an IDN domain in capitals (lower-cased by standardisation)'],
    ['x@straße.de', 'an IDNA2008 deviation character kept'],
    ['x@xn--mnchen-3ya.de', 'an IDN domain in ASCII form'],
    ['x@foo.xn--p1ai', 'an IDN TLD in ASCII form'],
    ['x@пример.рф', 'an IDN TLD in Unicode form'],
    ['josé@bücher.de', 'a UTF-8 local part'],
    ['用户@例子.中国', 'Chinese local part and domain'],
    [`${'a'.repeat(64)}@example.com`, 'a local part of exactly 64 octets'],
    [`${'a'.repeat(64)}@${domainOfLength(189)}`, 'an address of exactly 254 octets'],
    ['jane.doe@gmail.com', 'a Gmail username that follows the rules'],
    ['jane.doe+news@gmail.com', 'a Gmail +tag outside the username'],
    ['jane_doe-news@yahoo.com', 'a Yahoo -keyword'],
    ['Jane.Doe@Outlook.com', 'Microsoft, compared case-insensitively'],
    ['jane@a.io', 'one-letter labels'],
  ])('%j (%s)', (input) => {
    expect(codeOf(input)).toBe(10);
  });
});

describe('standardisation', () => {
  test('keeps surrounding white space (it is not part of an address), lower-cases the domain only', () => {
    expect(standardise('  \tJane.Doe@Example.COM \r\n')).toBe('  \tJane.Doe@example.com \r\n');
    expect(verifyOffline('Jane.Doe@Example.COM', NO_POLICY)).toEqual({
      address: 'Jane.Doe@example.com',
      code: 10,
    });
  });

  test('drops a mailto: prefix in any case', () => {
    expect(verifyOffline('mailto:jane@example.com', NO_POLICY)).toEqual({
      address: 'jane@example.com',
      code: 10,
    });
    expect(standardise('MailTo:Jane@Example.com')).toBe('Jane@example.com');
    expect(codeOf('mailto: jane@example.com')).toBe(210);
    expect(codeOf('mailto:')).toBe(150);
  });

  test('keeps an IDN domain in Unicode form, lower-cased', () => {
    expect(verifyOffline('Jane@MÜNCHEN.de', NO_POLICY).address).toBe('Jane@münchen.de');
  });

  test('an invalid address is reported standardised as well', () => {
    expect(verifyOffline('jane@Example.COM,', NO_POLICY)).toEqual({
      address: 'jane@example.com,',
      code: 210,
    });
  });

  test('checkSyntax gives the parts of a sound address', () => {
    expect(checkSyntax('Jane@münchen.de')).toEqual({
      ok: true,
      local: 'Jane',
      domain: 'münchen.de',
      asciiDomain: 'xn--mnchen-3ya.de',
    });
    expect(checkSyntax('jane')).toEqual({ ok: false, code: 150 });
  });
});
