/**
 * The one assertion of a refusal: the promise rejects with a BatonError of `code` whose message
 * matches `text` (when given); returns the error for further checks, and fails if it resolved.
 */
import assert from 'node:assert/strict';

import { BatonError } from '../../core/errors';
import type { ErrorCode } from '../../core/protocol';

export async function refused(promise: Promise<unknown>, code: ErrorCode, text?: RegExp): Promise<BatonError> {
	try {
		await promise;
	} catch (e) {
		assert.ok(BatonError.is(e), `expected a BatonError, got ${String(e)}`);
		assert.equal(e.code, code, e.message);
		if (text !== undefined) {
			assert.match(e.message, text);
		}
		return e;
	}
	assert.fail(`expected a ${code} refusal`);
}
