// Why rows are unknown, grouped by cause, largest first: "412 unknown: mx.acme-mail.com refused this machine's
// HELO name — set the HELO name under Connection → Checks" (E8's `online.unknown_causes`, shared/unknownCauses.ts).
// On Progress while a list runs and on Results once it is done.
import { APP_OPTION_WORDS, formatCauseLine, type UnknownCauseCount } from '../../shared/unknownCauses.js';

export function UnknownCauses({ causes }: Readonly<{ causes: readonly UnknownCauseCount[] | undefined }>) {
  if (!causes || causes.length === 0) return null;
  return (
    <section className="unknown-causes" aria-label="Unknown rows by cause">
      <h3>Why rows are unknown</h3>
      <ul>
        {causes.map((line) => (
          <li key={`${line.cause.kind}|${line.cause.host ?? ''}`}>
            {formatCauseLine(line, APP_OPTION_WORDS)}
          </li>
        ))}
      </ul>
    </section>
  );
}
