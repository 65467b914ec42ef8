/**
 * core/rules/dispatched.ts: the words every face prints for dispatch and which pause holds
 * a card back, table-driven; pure, no store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { BacklogEvent, Card, CardDispatch, Pause, RunInfo } from '../../core/protocol';
import {
	isCardless,
	isRunLive,
	minutesText,
	pauseOf,
	pauseTarget,
	pauseText,
	runningText,
	seatText,
	seatsOf,
} from '../../core/rules/dispatched';

const t0 = Date.parse('2026-11-26T10:00:00.000Z');
const at = (ms: number) => new Date(t0 + ms).toISOString();

const dispatch: CardDispatch = { run: 'default', seat: 2, kind: 'claude', host: 'box', startedAt: at(0) };

function pause(scope: Pause['scope'], target: string | null, reason: string | null = null): Pause {
	return { scope, target, reason, by: 'vscode:ann', at: at(0), stop: false };
}

function card(id: string, over: Partial<Card> = {}): Card {
	return {
		id,
		title: id,
		body: '',
		status: 'ready',
		priority: 0,
		phase: null,
		project: null,
		dependsOn: [],
		claimOwner: null,
		dispatch: null,
		...over,
	} as Card;
}

function run(name: string, seats: number, lastSeenMs: number): RunInfo {
	return {
		name,
		host: 'box',
		pid: 1,
		seats,
		kinds: ['claude'],
		project: null,
		inUse: 0,
		startedAt: at(0),
		lastSeenAt: at(lastSeenMs),
		gone: false,
		stopping: null,
	};
}

describe('dispatch words', () => {
	it('writes elapsed time in whole minutes, cut down', () => {
		const cases: [number, string][] = [
			[-5, 'under a minute'],
			[59_999, 'under a minute'],
			[60_000, '1 min'],
			[4 * 60_000 + 59_000, '4 min'],
			[60 * 60_000, '1 h 00 min'],
			[125 * 60_000, '2 h 05 min'],
		];
		for (const [ms, text] of cases) {
			assert.equal(minutesText(ms), text, `${ms} ms`);
		}
	});

	it('says where a dispatched card runs and for how long', () => {
		assert.equal(seatText(dispatch, t0 + 4 * 60_000 + 3_000), 'seat 2 · 4 min');
		assert.equal(runningText(dispatch, at(4 * 60_000 + 3_000)), 'running in seat 2, 4 min');
	});

	it('names a pause as the refused claim does', () => {
		assert.equal(pauseText(pause('all', null, 'deploy freeze')), 'paused by vscode:ann: deploy freeze');
		assert.equal(pauseText(pause('all', null)), 'paused by vscode:ann');
		assert.equal(pauseTarget(pause('all', null)), 'everything');
		assert.equal(pauseTarget(pause('project', 'github.com/acme/web')), 'project github.com/acme/web');
	});
});

describe('pauseOf', () => {
	const c = card('A4', { phase: 'api', project: 'github.com/acme/web' });
	const cases: [string, Pause[], Pause['scope'] | undefined][] = [
		['no pause', [], undefined],
		['everything', [pause('all', null)], 'all'],
		['its project', [pause('project', 'github.com/acme/web')], 'project'],
		['another project', [pause('project', 'github.com/acme/api')], undefined],
		['its phase', [pause('phase', 'api')], 'phase'],
		['the card', [pause('card', 'A4')], 'card'],
		['another card', [pause('card', 'A5')], undefined],
		['a kind (stops dispatch of that kind only)', [pause('kind', 'claude')], undefined],
	];
	for (const [name, pauses, scope] of cases) {
		it(`${name}: ${scope ?? 'not paused'}`, () => {
			assert.equal(pauseOf(c, pauses)?.scope, scope);
		});
	}

	it('a project pause does not hold a card without a project', () => {
		assert.equal(pauseOf(card('B1'), [pause('project', 'github.com/acme/web')]), undefined);
	});
});

describe('seats', () => {
	it('lists every seat of the live runs with the claimed card in it', () => {
		const held = card('A1', { status: 'claimed', dispatch: { ...dispatch, seat: 2 } });
		const other = card('B1', { status: 'claimed', dispatch: { ...dispatch, run: 'night', seat: 1 } });
		const done = card('C1', { status: 'done', dispatch: null });
		const seats = seatsOf([run('default', 3, 0), run('night', 2, -60_000)], [held, other, done], t0 + 5_000);
		assert.deepEqual(
			seats.map(s => [s.run, s.seat, s.card?.id]),
			[
				['default', 1, undefined],
				['default', 2, 'A1'],
				['default', 3, undefined],
			],
		);
	});

	it('counts a run gone 30 s after it last registered', () => {
		assert.equal(isRunLive(run('default', 1, 0), t0 + 29_999), true);
		assert.equal(isRunLive(run('default', 1, 0), t0 + 30_000), false);
		assert.equal(isRunLive({ ...run('default', 1, 0), gone: true }, t0), false);
	});
});

describe('isCardless', () => {
	it('passes by the line’s events whose card is null, and nothing else', () => {
		const ev = (type: BacklogEvent['type'], c: Card | null) => ({ type, data: { card: c } }) as BacklogEvent;
		assert.equal(isCardless(ev('paused', null)), true);
		assert.equal(isCardless(ev('run_updated', null)), true);
		assert.equal(isCardless(ev('agent_exited', null)), true);
		// A person's settings, hooks and forced gc change no card either.
		assert.equal(isCardless(ev('settings_changed', null)), true);
		assert.equal(isCardless(ev('hook_changed', null)), true);
		assert.equal(isCardless(ev('workspace_gc', null)), true);
		assert.equal(isCardless(ev('paused', card('A1'))), false);
		assert.equal(isCardless(ev('deleted', null)), false);
	});
});
