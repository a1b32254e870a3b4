// The Export dialog's choices for import (issue #12): Remove duplicates (keep the first), Leave out role
// addresses, Leave out disposable addresses, and the file format. What each leaves out is said beside it.
// Beside them, the safe and clean exports' bounce budget (issue 37).
import { useId } from 'react';
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

/** The budget as the user typed it, read: a percent from 0 to 100, or why not. */
export function readBudgetPercent(
  text: string,
): { ok: true; percent: number } | { ok: false; reason: string } {
  const percent = Number(text.trim().replace(',', '.'));
  if (text.trim() === '' || !Number.isFinite(percent) || percent < 0 || percent > 100)
    return { ok: false, reason: 'The budget is a percent from 0 to 100.' };
  return { ok: true, percent };
}

/**
 * "Keep the expected bounce rate under a budget" (issue 37): the safe and clean exports start from the rows
 * judged safe and add accept-all and unknown rows, the least risky first, while the file's expected bounce
 * rate stays within the budget.
 */
export function BudgetField({
  isOn,
  text,
  onChange,
}: Readonly<{ isOn: boolean; text: string; onChange: (isOn: boolean, text: string) => void }>) {
  const id = useId();
  const read = readBudgetPercent(text);
  return (
    <fieldset>
      <legend>Bounce budget</legend>
      <label className="checkbox">
        <input type="checkbox" checked={isOn} onChange={(event) => onChange(event.target.checked, text)} />
        Keep the expected bounce rate under a budget
        <span className="muted small"> · accept-all and unknown rows added, the least risky first</span>
      </label>
      {isOn ? (
        <>
          <p className="budget-percent">
            <label htmlFor={`${id}-percent`}>Keep the expected bounce rate under (%)</label>{' '}
            <input
              id={`${id}-percent`}
              type="number"
              min={0}
              max={100}
              step="any"
              value={text}
              aria-invalid={!read.ok}
              aria-describedby={read.ok ? undefined : `${id}-error`}
              onChange={(event) => onChange(true, event.target.value)}
            />
          </p>
          {read.ok ? null : (
            <p id={`${id}-error`} className="error small">
              {read.reason}
            </p>
          )}
        </>
      ) : null}
    </fieldset>
  );
}
