import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, VerifySlice } from './types.js';

export const createVerifySlice: StateCreator<AppState, [], [], VerifySlice> = (set) => ({
  verify: { status: 'idle' },
  async verifyAddress(email) {
    set({ verify: { status: 'checking', email } });
    const reply = await app.verifyAddress({ email });
    set({
      verify: reply.ok
        ? { status: 'done', answer: reply.value }
        : { status: 'failed', error: reply.error.message },
    });
  },
});
