// One store built from slices (zustand's slices pattern). Components read it through selectors.
import { create } from 'zustand';
import { createChangesSlice } from './changes.js';
import { createConnectionSlice } from './connection.js';
import { createHistorySlice } from './history.js';
import { createJobsSlice } from './jobs.js';
import { createLookupSlice } from './lookup.js';
import { createNavigationSlice } from './navigation.js';
import { createNewJobSlice } from './newJob.js';
import { createOutcomesSlice } from './outcomes.js';
import type { AppState } from './types.js';
import { createVerifySlice } from './verify.js';

export const useAppStore = create<AppState>()((...a) => ({
  ...createNavigationSlice(...a),
  ...createConnectionSlice(...a),
  ...createNewJobSlice(...a),
  ...createJobsSlice(...a),
  ...createHistorySlice(...a),
  ...createVerifySlice(...a),
  ...createLookupSlice(...a),
  ...createOutcomesSlice(...a),
  ...createChangesSlice(...a),
}));

export type { AppState, Screen } from './types.js';
