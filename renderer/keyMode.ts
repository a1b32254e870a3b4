// The verification mode whose words the screens use: the connection's key decides (issue #12). The local
// service's key answers in safe_to_send mode; a provider key's mode is known once it has answered (a
// connection test or a verified address); until then, the list results' own (legacy) vocabulary.
import type { VerificationMode } from '../shared/api/codes.js';
import type { AppState } from './store/types.js';

export function keyModeOf(state: AppState): VerificationMode {
  if (state.connection?.kind !== 'provider') return 'safe_to_send';
  if (state.verify.status === 'done' && state.verify.answer.connection === 'provider')
    return state.verify.answer.mode;
  if (state.connectionAction.status === 'tested') return state.connectionAction.value.mode;
  return 'email_validation';
}
