import { useEffect, useRef, useState } from 'react';
import {
  EXPORT_CHOICES,
  EXPORT_LABELS,
  RESULT_STATUSES,
  type ExportChoice,
  type ResultStatus,
} from '../../shared/desktop/constants.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { countsOf } from '../../shared/desktop/listServices.js';
import { BudgetField, ExportChoicesFields, readBudgetPercent } from './ExportChoicesFields.js';
import {
  DEFAULT_MAX_BOUNCE_PERCENT,
  budgetRiskWords,
  budgetWords,
  isBudgetExportKind,
} from '../../shared/outcomes.js';
import { app } from '../platform/app.js';
import type { STATUS_ORDER } from '../format.js';
import { countOf, formatBytes, REPORT_KEY_OF_STATUS } from '../format.js';
import { statusName } from '../../shared/vocabulary.js';
import { defaultExportChoices, describeLeftOut, type ExportChoices } from '../../shared/exportChoices.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';
import { CHECKS_LEVEL_WORDS } from '../../shared/desktop/checks.js';
import { checksLevelOf } from './ChecksNote.js';

/** The Export dialog of Results: which rows, the choices for import, the format. */
export function ExportDialog({ job, onClose }: Readonly<{ job: JobDetail; onClose: () => void }>) {
  const dialog = useRef<HTMLDialogElement>(null);
  const exportState = useAppStore((s) => s.exportState);
  const exportJob = useAppStore((s) => s.exportJob);
  const mode = useAppStore(keyModeOf);
  const hasValidation = job.options.services.includes('email_validation');
  // Without validation the rows have no status: all of them is the one export.
  const kinds = hasValidation ? EXPORT_CHOICES : (['all'] as const);
  const [kind, setKind] = useState<ExportChoice>(
    !hasValidation ? 'all' : job.checks === 'offline' ? 'clean' : 'safe',
  );
  const [custom, setCustom] = useState<ReadonlySet<ResultStatus>>(new Set(['valid', 'corrected']));
  const statuses = countsOf(job.reporting?.statuses);
  // Choices per kind, each starting from its defaults (Remove duplicates on for clean and safe).
  const [chosen, setChosen] = useState<Partial<Record<ExportChoice, ExportChoices>>>({});
  const choices = chosen[kind] ?? defaultExportChoices(kind);
  // The bounce budget (issue 37): for the exports that start from the rows judged safe.
  const [isBudgetOn, setBudgetOn] = useState(false);
  const [budgetText, setBudgetText] = useState(String(DEFAULT_MAX_BOUNCE_PERCENT));
  const hasBudget = hasValidation && isBudgetExportKind(kind);
  const budget = hasBudget && isBudgetOn ? readBudgetPercent(budgetText) : undefined;
  const isDefault = (c: ExportChoices) => JSON.stringify(c) === JSON.stringify(defaultExportChoices(kind));
  const showInFolder = useAppStore((s) => s.showInFolder);
  const canShowInFolder = app.showInFolder !== undefined;
  // The export's summary says the level the job ran with (issue #11).
  const level = checksLevelOf(job);
  const checks = level === null ? null : CHECKS_LEVEL_WORDS[level];

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    // Focus the option chosen, not the first one.
    element?.querySelector<HTMLInputElement>('input[name="export-kind"]:checked')?.focus();
  }, []);

  const count = (k: ExportChoice): number | null => {
    const of = (status: (typeof STATUS_ORDER)[number]) => statuses[REPORT_KEY_OF_STATUS[status]] ?? 0;
    switch (k) {
      case 'safe':
        return of('valid') + of('corrected');
      case 'clean':
        return of('valid') + of('corrected') + of('unknown') + of('unverifiable');
      case 'invalid':
        return of('invalid');
      case 'all':
      case 'zip':
        return job.rows;
      case 'custom':
        return [...custom].reduce((total, status) => total + of(status), 0);
    }
  };
  const isWorking = exportState.status === 'working';
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="export-heading" onClose={onClose}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          // `all` without changes is the results as they are; any other export is shaped for import.
          if (budget && !budget.ok) return;
          void exportJob(
            job.id,
            kind,
            [...custom],
            kind === 'all' && isDefault(choices) ? undefined : choices,
            undefined,
            budget?.ok ? budget.percent : undefined,
          );
        }}
      >
        <h2 id="export-heading">Export</h2>
        <fieldset>
          <legend>Rows to export</legend>
          {kinds.map((k) => {
            const n = count(k);
            return (
              <label key={k} className="radio">
                <input
                  type="radio"
                  name="export-kind"
                  value={k}
                  checked={kind === k}
                  onChange={() => setKind(k)}
                />
                {EXPORT_LABELS[k]}
                {n !== null ? <span className="muted"> · {countOf(n, 'row')}</span> : null}
              </label>
            );
          })}
        </fieldset>
        {kind === 'custom' ? (
          <fieldset className="custom-statuses">
            <legend>Statuses</legend>
            {RESULT_STATUSES.map((status) => (
              <label key={status} className="checkbox">
                <input
                  type="checkbox"
                  checked={custom.has(status)}
                  onChange={(event) => {
                    const next = new Set(custom);
                    if (event.target.checked) next.add(status);
                    else next.delete(status);
                    setCustom(next);
                  }}
                />
                {statusName(status, mode)}
              </label>
            ))}
          </fieldset>
        ) : null}
        {hasValidation ? (
          <ExportChoicesFields
            choices={choices}
            onChange={(next) => setChosen({ ...chosen, [kind]: next })}
          />
        ) : null}
        {hasBudget ? (
          <BudgetField
            isOn={isBudgetOn}
            text={budgetText}
            onChange={(isOn, text) => {
              setBudgetOn(isOn);
              setBudgetText(text);
            }}
          />
        ) : null}
        <p className="muted small">
          Every export keeps the file’s own columns and the appended result columns
          {kind === 'all' && isDefault(choices) ? '; “All rows” is the results file as it is' : ''}
          {kind === 'zip' ? '; the zip holds one file per status the results have, in the format chosen' : ''}
          .
        </p>
        {exportState.status === 'failed' ? (
          <p className="error" role="alert">
            {exportState.error}
          </p>
        ) : null}
        {exportState.status === 'done' ? (
          <div role="status">
            <p>
              Exported {countOf(exportState.info.rows, 'row')}
              {exportState.info.leftOut ? ` (${describeLeftOut(exportState.info.leftOut)})` : ''} to{' '}
              {exportState.path ?? `${exportState.info.fileName} in your browser’s downloads`} (
              {formatBytes(exportState.info.bytes)}).
            </p>
            {exportState.info.budget ? (
              <>
                <p>{budgetWords(exportState.info.budget)}</p>
                <p className="muted small">{budgetRiskWords(exportState.info.budget.riskSource)}</p>
              </>
            ) : null}
            {checks ? <p className="muted small">Checks: {checks}.</p> : null}
            {exportState.path && canShowInFolder ? (
              <button type="button" onClick={() => void showInFolder(exportState.path!)}>
                Show in folder
              </button>
            ) : null}
          </div>
        ) : (
          <p role="status" className="visually-hidden">
            {isWorking ? 'Exporting…' : ''}
          </p>
        )}
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            {exportState.status === 'done' ? 'Close' : 'Cancel'}
          </button>
          <button
            type="submit"
            className="primary"
            disabled={isWorking || (kind === 'custom' && custom.size === 0) || budget?.ok === false}
          >
            {isWorking ? 'Exporting…' : 'Save export'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
