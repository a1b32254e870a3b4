// The name of `window.app`'s function for each channel of the contract. Kept apart from contract.ts (no zod
// here) so the sandboxed preload, which must be one self-contained script, stays small.

export const METHOD_OF_CHANNEL = {
  'app:get-info': 'getAppInfo',
  'connection:get': 'getConnection',
  'connection:test': 'testConnection',
  'connection:set': 'setConnection',
  'keys:clear': 'clearKey',
  'connection:get-services': 'getAllowedServices',
  'connection:get-quota': 'getKeyQuota',
  'connection:set-services': 'setChosenServices',
  'checks:get': 'getChecks',
  'checks:set': 'setChecks',
  'checks:preflight': 'runPreflight',
  'files:add-path': 'addPath',
  'files:list-recent': 'listRecentFiles',
  'files:inspect': 'inspectFile',
  'files:precheck': 'precheckFile',
  'files:cancel': 'cancelFileCheck',
  'jobs:start': 'startJob',
  'jobs:list': 'listJobs',
  'jobs:activity': 'getJobActivity',
  'jobs:get': 'getJob',
  'jobs:cancel': 'cancelJob',
  'jobs:delete': 'deleteJob',
  'jobs:rerun': 'rerunJob',
  'jobs:preview': 'previewRows',
  'jobs:export': 'exportJob',
  'jobs:counts': 'getJobCounts',
  'jobs:save-report': 'saveReport',
  'jobs:purchase': 'purchaseJob',
  'jobs:finish-now': 'finishJobNow',
  // Re-check unknown rows (issue #11)
  'jobs:recheck': 'recheckJob',
  'jobs:recheck-cancel': 'cancelRecheck',
  'verify:address': 'verifyAddress',
  'people:lookup': 'lookUpPerson',
  // Import reference data from Look up a person (issue #15).
  'people:import': 'importReferenceFile',
  'people:import-cancel': 'cancelReferenceImport',
  // After the campaign (issue 37).
  'outcomes:import': 'importOutcomes',
  'outcomes:get': 'getOutcomes',
  'jobs:changes': 'getJobChanges',
  'jobs:export-changes': 'exportJobChanges',
} as const;

/** Operations only the Electron shell performs (native dialogs); browser mode does them in the page. */
export const SHELL_CHANNELS = {
  openListDialog: 'dialog:open-list',
  saveExportDialog: 'dialog:save-export',
  /** Opens the folder of a file the user saved, with the file selected (Electron's shell). */
  showInFolder: 'shell:show-in-folder',
  /** Saves the window's page as PDF (Electron's printToPDF): the printable summary of a job. */
  savePagePdf: 'dialog:save-page-pdf',
  /** Picks a people or activity file to import (Look up a person, issue #15). */
  pickReferenceFile: 'dialog:pick-reference',
} as const;

/** Events the core pushes; `on(event, cb)` accepts these and no others. */
export const EVENT_CHANNELS = [
  'jobs:changed',
  'job:progress',
  'connection:changed',
  'files:opened',
  'files:progress',
  'people:import-progress',
] as const;

/** IPC channel that carries core events to the window (one channel, the event name inside). */
export const EVENT_IPC_CHANNEL = 'app:event';
