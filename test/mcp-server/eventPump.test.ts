/**
 * The hub's event pump when the store cannot be read (PostgreSQL restarting), on a fake event source:
 * a seq hole is not skipped while reads fail (the event exists, it just cannot be read yet), failed
 * reads are retried without waiting for a kick, and a real hole (a rolled-back seq) is still skipped
 * once a read succeeds after the wait. Timing runs on the test clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../core/clock';
import type { BacklogEvent } from '../../core/protocol';
import { EventPump, type EventSource } from '../../mcp-server/hub/eventPump';

function event(seq: number): BacklogEvent {
	return {
		seq,
		at: new Date().toISOString(),
		cardId: `c${seq}`,
		actor: 'test',
		type: 'created',
		data: { card: null },
	} as unknown as BacklogEvent;
}

/** The committed log; `down` makes every read fail as a stopped server does. */
class FakeSource implements EventSource {
	readonly log: BacklogEvent[] = [];
	down = false;
	reads = 0;
	private readonly listeners = new Set<(events: BacklogEvent[]) => void>();

	onCommitted(listener: (events: BacklogEvent[]) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	eventsAfter(seq: number, limit: number): Promise<BacklogEvent[]> {
		this.reads++;
		if (this.down) {
			return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
		}
		return Promise.resolve(this.log.filter(e => e.seq > seq).slice(0, limit));
	}

	lastSeq(): Promise<number> {
		return Promise.resolve(0);
	}

	/** This hub committed `seq` (another hub may hold smaller ones not read yet). */
	commitHere(seq: number): void {
		const e = event(seq);
		this.log.push(e);
		for (const listener of this.listeners) {
			listener([e]);
		}
	}
}

function pumpOn(source: FakeSource): { pump: EventPump; delivered: number[]; clock: ManualClock } {
	const delivered: number[] = [];
	const clock = new ManualClock();
	const pump = new EventPump(source, events => delivered.push(...events.map(e => e.seq)), {
		holeWaitMs: 100,
		clock,
	});
	return { pump, delivered, clock };
}

describe('EventPump while the store cannot be read', () => {
	it('keeps a hole it could not read past the wait, and delivers it once the store answers', async () => {
		const source = new FakeSource();
		const { pump, delivered, clock } = pumpOn(source);
		await pump.start();
		source.down = true;
		// Seq 1 was committed by another hub; this hub's seq 2 arrives while nothing can be read.
		source.log.push(event(1));
		source.commitHere(2);
		await clock.tick(500);
		assert.deepEqual(delivered, [], 'seq 1 is not skipped as rolled back while reads fail');
		assert.equal(source.reads, 3, 'retried with backoff: reads at 0, 100 and 300 ms');
		source.down = false;
		// The next retry is due 400 ms after the last one, at 700 ms.
		await clock.tick(199);
		assert.deepEqual(delivered, []);
		await clock.tick(1);
		assert.deepEqual(delivered, [1, 2]);
		pump.stop();
	});

	it('retries a failed read without another kick', async () => {
		const source = new FakeSource();
		const { pump, delivered, clock } = pumpOn(source);
		await pump.start();
		source.down = true;
		source.log.push(event(1));
		pump.kick();
		await clock.tick(150);
		source.down = false;
		await clock.tick(2_000);
		assert.deepEqual(delivered, [1], 'the event written while reads failed');
		pump.stop();
	});

	it('still skips a rolled-back seq once a read after the wait succeeds', async () => {
		const source = new FakeSource();
		const { pump, delivered, clock } = pumpOn(source);
		await pump.start();
		source.commitHere(2);
		await clock.tick(99);
		assert.deepEqual(delivered, [], 'held back while the hole may still commit');
		await clock.tick(1);
		assert.deepEqual(delivered, [2], 'seq 2 past the hole');
		assert.equal(pump.seq, 2);
		pump.stop();
	});
});
