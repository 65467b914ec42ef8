/**
 * CLI flags derived from the protocol's params schemas (mcp-server/cli/flags.ts): what a flag's type,
 * repeatability, help and required-ness come from, how its value is converted and checked with the
 * field's schema, and which failures are usage errors (exit 2) and which invalid_input (exit 1).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { BatonError } from '../../core/errors';
import { FailParams, ListParams, UpdateParams } from '../../core/protocol';
import { cliFlags, paramFlags } from '../../mcp-server/cli/flags';
import { UsageError } from '../../mcp-server/cli/output';

describe('CLI flags from the params schemas', () => {
	const list = paramFlags(ListParams, { status: { value: 'S' }, readyOnly: { flag: 'ready' }, limit: {} });

	it('takes the type, repeatability, help and bounds from the field', () => {
		assert.deepEqual(list.options.limit, { type: 'string', value: 'N', description: 'Page size; default 50 (1–1000)' });
		assert.equal(list.options.ready?.type, 'boolean');
		assert.equal(list.options.status?.multiple, true);
		assert.match(
			list.options.status.description,
			/ready, claimed, review, blocked, done, waiting, deferred, paused; comma-separated/,
		);
		const fail = paramFlags(FailParams, { reason: {}, retry: { flag: 'no-retry', negate: true } });
		assert.match(fail.options.reason?.description ?? '', /\(required\)$/);
	});

	it('reads values typed, under the field names, only when given', () => {
		assert.deepEqual(list.read({ limit: '20', ready: true, status: ['ready,done'] }), {
			limit: 20,
			readyOnly: true,
			status: ['ready', 'done'],
		});
		assert.deepEqual(list.read({ status: ['blocked'] }), { status: 'blocked' }, 'one status is sent bare');
		assert.deepEqual(list.read({}), {});
		const fail = paramFlags(FailParams, { reason: {}, retry: { flag: 'no-retry', negate: true } });
		assert.deepEqual(fail.read({ reason: 'flaky', 'no-retry': true }), { reason: 'flaky', retry: false });
	});

	it('maps a null word to null where the field takes null', () => {
		const edit = paramFlags(UpdateParams, { backoffSeconds: { nullWord: 'default' } });
		assert.deepEqual(edit.read({ 'backoff-seconds': 'default' }), { backoffSeconds: null });
		assert.deepEqual(edit.read({ 'backoff-seconds': '30' }), { backoffSeconds: 30 });
	});

	it('refuses a value of the wrong type and a missing required flag as usage errors', () => {
		assert.throws(
			() => list.read({ limit: 'ten' }),
			(e: unknown) => {
				assert.ok(e instanceof UsageError);
				assert.equal(e.message, '--limit must be a whole number, got "ten".');
				return true;
			},
		);
		const fail = paramFlags(FailParams, { reason: {} });
		assert.throws(() => fail.read({}), /--reason is required/);
	});

	it('refuses what the schema refuses as invalid_input naming the flag', () => {
		assert.throws(
			() => list.read({ limit: '5000' }),
			(e: unknown) => BatonError.is(e, 'invalid_input') && e.message.startsWith('--limit: Too big'),
		);
		assert.throws(
			() => list.read({ status: ['doing'] }),
			(e: unknown) => BatonError.is(e, 'invalid_input') && e.message.startsWith('--status "doing": '),
		);
	});

	it('reads the CLI-only flags by camelCase name', () => {
		const own = cliFlags({
			bodyFile: { type: 'string', value: 'PATH', description: 'x' },
			all: { type: 'boolean', description: 'y' },
		});
		assert.deepEqual(Object.keys(own.options), ['body-file', 'all']);
		assert.deepEqual(own.read({ 'body-file': 'a.md' }), { bodyFile: 'a.md', all: false });
	});
});
