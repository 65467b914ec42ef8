/**
 * Outgoing webhooks' pure parts (core/formats/webhook.ts): the signature a receiver checks (tampered body,
 * wrong secret, replayed timestamp), the stable delivery id, and which events of a page a hook
 * delivers, passes or reports as compacted away. Then the store's side (core/backlog/hookStore.ts) on
 * real PGlite and PostgreSQL: one hub's lease on a hook at a time (two Backlogs on one PostgreSQL
 * schema are two hubs), writes refused without it, and the delivery log bounded to 50 rows per hook.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Backlog } from '../../core/backlog';
import type { BacklogEvent, EventType } from '../../core/protocol';
import {
	type HookStep,
	deliveryId,
	planHookSteps,
	signWebhook,
	verifyWebhook,
	webhookHeaders,
	webhookRequest,
} from '../../core/formats/webhook';
import { type TestBacklog, openTestBacklog, storeKinds } from '../helpers/backlog';

const secret = 'sixteen-chars-at-least';

function event(seq: number, type: EventType = 'updated', cardId = 'A'): BacklogEvent {
	return { seq, at: '2026-11-25T00:00:00.000Z', cardId, actor: 'alice', type, data: { card: null } };
}

describe('webhook signatures', () => {
	const now = 1_800_000_000;
	const hook = { id: 'hk0000abcd', instance: '1f2e3d4c', secret };
	const request = webhookRequest(hook, event(7, 'completed'), now, 'baton/test');

	it('signs "<timestamp>.<body>" and the receiver verifies it', () => {
		const h = request.headers;
		assert.equal(h[webhookHeaders.delivery], 'hk0000abcd-1f2e3d4c-7');
		assert.equal(h[webhookHeaders.event], 'completed');
		assert.equal(h[webhookHeaders.signature], signWebhook(secret, now, request.body));
		assert.match(h[webhookHeaders.signature] ?? '', /^sha256=[0-9a-f]{64}$/);
		assert.equal(verifyWebhook(secret, request.body, String(now), h[webhookHeaders.signature], now + 10), true);
		assert.deepEqual(JSON.parse(request.body), {
			hook: 'hk0000abcd',
			delivery: 'hk0000abcd-1f2e3d4c-7',
			event: event(7, 'completed'),
		});
	});

	it('refuses a changed body, another secret, a missing header and an old timestamp', () => {
		const sig = request.headers[webhookHeaders.signature];
		assert.equal(verifyWebhook(secret, request.body.replace('alice', 'mallory'), String(now), sig, now), false);
		assert.equal(verifyWebhook('another-secret-entirely', request.body, String(now), sig, now), false);
		assert.equal(verifyWebhook(secret, request.body, undefined, sig, now), false);
		assert.equal(verifyWebhook(secret, request.body, String(now), undefined, now), false);
		assert.equal(verifyWebhook(secret, request.body, String(now), sig, now + 301), false, 'replayed after 5 min');
		assert.equal(verifyWebhook(secret, request.body, String(now + 1), sig, now), false, 'timestamp is signed');
	});

	it('keeps the delivery id of an event the same on every retry', () => {
		const again = webhookRequest(hook, event(7, 'completed'), now + 60, 'baton/test');
		assert.equal(again.headers[webhookHeaders.delivery], deliveryId('hk0000abcd', '1f2e3d4c', 7));
		// A restored copy of the hook (another instance) sends the same seq under another id.
		const copy = webhookRequest({ ...hook, instance: '9a8b7c6d' }, event(7, 'completed'), now, 'baton/test');
		assert.notEqual(copy.headers[webhookHeaders.delivery], request.headers[webhookHeaders.delivery]);
		assert.notEqual(again.headers[webhookHeaders.signature], request.headers[webhookHeaders.signature]);
	});
});

/** A step with its event shown as its seq, so the table reads short. */
type PlannedStep = { kind: 'deliver'; seq: number } | Exclude<HookStep, { kind: 'deliver' }>;

describe('planHookSteps', () => {
	const cases: {
		name: string;
		events: BacklogEvent[];
		cursor: number;
		horizon: number;
		wanted: EventType[];
		end?: number;
		steps: PlannedStep[];
	}[] = [
		{
			name: 'delivers every event of a contiguous page',
			events: [event(4), event(5)],
			cursor: 3,
			horizon: 0,
			wanted: [],
			steps: [
				{ kind: 'deliver', seq: 4 },
				{ kind: 'deliver', seq: 5 },
			],
		},
		{
			name: 'passes events the filter does not want',
			events: [event(4, 'heartbeat'), event(5, 'completed')],
			cursor: 3,
			horizon: 0,
			wanted: ['completed'],
			steps: [
				{ kind: 'pass', seq: 4 },
				{ kind: 'deliver', seq: 5 },
			],
		},
		{
			name: 'reports a hole at or below the horizon as compacted away, for a hook that wants progress',
			events: [event(9)],
			cursor: 3,
			horizon: 6,
			wanted: [],
			steps: [
				{ kind: 'skip', from: 4, to: 6 },
				{ kind: 'pass', seq: 8 },
				{ kind: 'deliver', seq: 9 },
			],
		},
		{
			name: 'passes holes silently for a hook that does not want progress events',
			events: [event(9, 'completed')],
			cursor: 3,
			horizon: 6,
			wanted: ['completed'],
			steps: [
				{ kind: 'pass', seq: 8 },
				{ kind: 'deliver', seq: 9 },
			],
		},
		{
			name: 'passes a hole above the horizon (a rolled-back seq) and runs to the settled end',
			events: [event(4), event(6)],
			cursor: 3,
			horizon: 0,
			wanted: [],
			end: 8,
			steps: [
				{ kind: 'deliver', seq: 4 },
				{ kind: 'pass', seq: 5 },
				{ kind: 'deliver', seq: 6 },
				{ kind: 'pass', seq: 8 },
			],
		},
		{
			name: 'does nothing at the end',
			events: [],
			cursor: 8,
			horizon: 3,
			wanted: [],
			end: 8,
			steps: [],
		},
	];
	for (const c of cases) {
		it(c.name, () => {
			const steps = planHookSteps(c.events, c.cursor, c.horizon, c.wanted, c.end).map(s =>
				s.kind === 'deliver' ? { kind: s.kind, seq: s.event.seq } : s,
			);
			assert.deepEqual(steps, c.steps);
		});
	}
});

for (const kind of storeKinds) {
	describe(`hook leases and the delivery log on ${kind}`, () => {
		let one: TestBacklog;
		let other: Backlog;

		before(async () => {
			one = await openTestBacklog(kind);
			other = kind === 'postgres' ? await Backlog.open(one.options) : one.backlog;
		});
		after(async () => {
			if (other !== one.backlog) {
				await other.close();
			}
			await one.cleanup();
		});

		it('lets one hub at a time deliver a hook, and refuses writes without the lease', async () => {
			const { hook } = await one.backlog.addHook({ actor: 'alice' }, { url: 'http://127.0.0.1:9/h', secret });
			const a = await one.backlog.hooks.takeLease(hook.id, 'hub-a', 30);
			assert.equal(a?.secret, secret, 'the delivering hub reads the secret');
			assert.equal(await other.hooks.takeLease(hook.id, 'hub-b', 30), null, 'hub b waits');
			assert.equal(await other.hooks.record(hook.id, 'hub-b', { seq: 1, attempt: 1, outcome: 'delivered' }), false);
			assert.equal(await other.hooks.advance(hook.id, 'hub-b', 1), false);
			assert.equal(
				await one.backlog.hooks.record(hook.id, 'hub-a', { seq: 1, attempt: 1, outcome: 'delivered' }),
				true,
			);
			await one.backlog.hooks.releaseLeases('hub-a');
			const b = await other.hooks.takeLease(hook.id, 'hub-b', 30);
			assert.equal(b?.cursor, 1, 'hub b resumes from the cursor hub a stored');
			const listed = (await other.listHooks({})).hooks[0];
			assert.equal(JSON.stringify(listed).includes(secret), false, 'lists show a fingerprint only');
			await other.removeHook({ actor: 'alice' }, { id: hook.id });
		});

		it('keeps the newest 50 delivery log rows of a hook', async () => {
			const { hook } = await one.backlog.addHook({ actor: 'alice' }, { url: 'http://127.0.0.1:9/h', secret });
			assert.ok(await one.backlog.hooks.takeLease(hook.id, 'hub-a', 30));
			for (let seq = 1; seq <= 60; seq++) {
				const failed = seq % 2 === 0;
				await one.backlog.hooks.record(hook.id, 'hub-a', {
					seq,
					attempt: 1,
					outcome: failed ? 'failed' : 'delivered',
					...(failed ? { status: 500, error: 'HTTP 500' } : { status: 200 }),
				});
			}
			const listed = (await one.backlog.listHooks({ recent: 50 })).hooks.find(h => h.id === hook.id);
			assert.equal(listed?.recent.length, 50);
			assert.equal(listed.recent[0]?.seq, 11);
			assert.equal(listed.recent.at(-1)?.seq, 60);
			assert.equal(listed.failures, 1, 'the last attempt failed');
			assert.equal(listed.lastError, 'HTTP 500');
			assert.equal(listed.delivered, 30);
			const rows = await one.backlog.hooks.ids();
			assert.ok(rows.includes(hook.id));
		});
	});
}
