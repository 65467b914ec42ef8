/**
 * The logger of the hub, the MCP server and core (core/log.ts): one line per message with an ISO
 * timestamp, the level and the component; levels below the configured one dropped; BATON_LOG_LEVEL
 * read when a logger is made. And core's own diagnostics reach the logger its owner passes in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import { type LoggerOptions, createLogger, levelFromEnv } from '../../core/log';

const at = Date.parse('2026-11-25T09:00:00.000Z');

/** A logger whose lines are collected, at a fixed time. */
function collecting(options: LoggerOptions = {}): { lines: string[]; options: LoggerOptions } {
	const lines: string[] = [];
	return { lines, options: { now: () => at, write: line => lines.push(line), ...options } };
}

describe('createLogger', () => {
	it('writes one line: ISO timestamp, level padded to five, component, message', () => {
		const { lines, options } = collecting();
		const log = createLogger('hub', options);
		log.info('listening on 127.0.0.1:4100');
		log.warn('store is slow');
		assert.deepEqual(lines, [
			'2026-11-25T09:00:00.000Z info  hub: listening on 127.0.0.1:4100\n',
			'2026-11-25T09:00:00.000Z warn  hub: store is slow\n',
		]);
	});

	it('drops what is below its level and keeps the rest', () => {
		const { lines, options } = collecting({ level: 'warn' });
		const log = createLogger('hub', options);
		log.debug('d');
		log.info('i');
		log.warn('w');
		log.error('e');
		assert.deepEqual(
			lines.map(l => l.split(' ')[1]),
			['warn', 'error'],
		);
	});

	it('logs debug only when asked to', () => {
		const quiet = collecting();
		createLogger('hub', quiet.options).debug('hidden');
		assert.deepEqual(quiet.lines, []);
		const verbose = collecting({ level: 'debug' });
		createLogger('hub', verbose.options).debug('shown');
		assert.deepEqual(verbose.lines, ['2026-11-25T09:00:00.000Z debug hub: shown\n']);
	});

	it('names a child after its parent, and a grandchild after both, at the same level', () => {
		const { lines, options } = collecting({ level: 'warn' });
		const reaper = createLogger('hub', options).child('reaper');
		reaper.info('dropped');
		reaper.warn('late');
		reaper.child('timer').error('gone');
		assert.deepEqual(lines, [
			'2026-11-25T09:00:00.000Z warn  hub/reaper: late\n',
			'2026-11-25T09:00:00.000Z error hub/reaper/timer: gone\n',
		]);
	});

	it("appends an error's stack, or any other value as text, after the message", () => {
		const { lines, options } = collecting();
		const log = createLogger('core', options);
		const error = new Error('boom');
		log.error('listener failed', error);
		log.error('odd value', 'plain words');
		log.error('odd value', { code: 7 });
		assert.equal(lines[0], `2026-11-25T09:00:00.000Z error core: listener failed: ${error.stack ?? ''}\n`);
		assert.equal(lines[1], '2026-11-25T09:00:00.000Z error core: odd value: plain words\n');
		assert.equal(lines[2], '2026-11-25T09:00:00.000Z error core: odd value: {"code":7}\n');
	});

	it('never throws on a value JSON cannot print (it runs inside catch blocks)', () => {
		const { lines, options } = collecting();
		const log = createLogger('core', options);
		const circular: Record<string, unknown> = {};
		circular.self = circular;
		log.error('circular', circular);
		log.error('bigint', 10n);
		log.error('symbol', Symbol('s'));
		assert.deepEqual(lines, [
			'2026-11-25T09:00:00.000Z error core: circular: [object Object]\n',
			'2026-11-25T09:00:00.000Z error core: bigint: 10\n',
			'2026-11-25T09:00:00.000Z error core: symbol: Symbol(s)\n',
		]);
	});
});

describe('BATON_LOG_LEVEL', () => {
	it('names the level, in any case and with spaces around; anything else is info', () => {
		assert.equal(levelFromEnv({ BATON_LOG_LEVEL: 'debug' }), 'debug');
		assert.equal(levelFromEnv({ BATON_LOG_LEVEL: ' WARN ' }), 'warn');
		assert.equal(levelFromEnv({ BATON_LOG_LEVEL: 'error' }), 'error');
		assert.equal(levelFromEnv({}), 'info');
		assert.equal(levelFromEnv({ BATON_LOG_LEVEL: 'verbose' }), 'info');
		assert.equal(levelFromEnv({ BATON_LOG_LEVEL: 'constructor' }), 'info');
	});

	it('is read from the environment when a logger is made without a level', () => {
		const previous = process.env.BATON_LOG_LEVEL;
		process.env.BATON_LOG_LEVEL = 'error';
		try {
			const { lines, options } = collecting();
			const log = createLogger('hub', options);
			log.warn('dropped');
			log.error('kept');
			assert.deepEqual(lines, ['2026-11-25T09:00:00.000Z error hub: kept\n']);
		} finally {
			if (previous === undefined) {
				delete process.env.BATON_LOG_LEVEL;
			} else {
				process.env.BATON_LOG_LEVEL = previous;
			}
		}
	});
});

describe("core's diagnostics", () => {
	it("report a listener that throws after a commit to the backlog's logger; the caller still succeeds", async () => {
		const { lines, options } = collecting();
		const backlog = await Backlog.open({ log: createLogger('hub', options).child('backlog') });
		try {
			backlog.onCommitted(() => {
				throw new Error('listener broke');
			});
			const { cards } = await backlog.create({ actor: 'alice' }, { cards: [{ title: 'Still created' }] });
			assert.equal(cards.length, 1);
			assert.equal(lines.length, 1);
			assert.match(
				lines[0] ?? '',
				/^2026-11-25T09:00:00\.000Z error hub\/backlog: an onCommitted listener failed: Error: listener broke\n/,
			);
		} finally {
			await backlog.close();
		}
	});
});
