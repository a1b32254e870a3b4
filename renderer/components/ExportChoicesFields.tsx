// The Export dialog's choices for import (issue #12): Remove duplicates (keep the first), Leave out role
// addresses, Leave out disposable addresses, and the file format. What each leaves out is said beside it.
import {
  EXPORT_FORMATS,
  EXPORT_FORMAT_LABELS,
  type ExportChoices,
  type ExportFormat,
} from '../../shared/exportChoices.js';

export function ExportChoicesFields({
  choices,
  onChange,
}: Readonly<{ choices: ExportChoices; onChange: (choices: ExportChoices) => void }>) {
  const flag = (key: 'dedupe' | 'dropRole' | 'dropDisposable', label: string, hint: string) => (
    <label className="checkbox">
      <input
        type="checkbox"
        checked={choices[key]}
        onChange={(event) => onChange({ ...choices, [key]: event.target.checked })}
      />
      {label}
      <span className="muted small"> · {hint}</span>
    </label>
  );
  return (
    <>
      <fieldset>
        <legend>Leave out</legend>
        {flag(
          'dedupe',
          'Remove duplicates (keep the first)',
          'the same address again, in any case, after correction',
        )}
        {flag('dropRole', 'Leave out role addresses', 'shared mailboxes such as info@ or sales@')}
        {flag('dropDisposable', 'Leave out disposable addresses', 'throw-away mail domains')}
      </fieldset>
      <label className="field">
        File format{' '}
        <select
          value={choices.format}
          onChange={(event) => onChange({ ...choices, format: event.target.value as ExportFormat })}
        >
          {EXPORT_FORMATS.map((format) => (
            <option key={format} value={format}>
              {EXPORT_FORMAT_LABELS[format]}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small">
        The address column holds the address to mail: for a corrected row the correction, with the address as
        the list had it in “Original Email”.
      </p>
    </>
  );
}
