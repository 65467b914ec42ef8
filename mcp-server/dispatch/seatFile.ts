/**
 * What a restarted supervisor needs to act for a dispatched card that the backlog does not hold: the
 * seat's agent id and session (the only session allowed to fail or release the card's lease), kept in
 * `<dataDir>/runs/<run>/<card>.seat.json` from just before the agent starts until its claim has ended.
 * The backlog stays the truth for who holds what (cards.dispatch); this file only lets the supervisor
 * speak as the holder again. Must not: be read for any card whose dispatch does not name this run.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileWhole } from '../../core/files/wholeFile';

export interface SeatRecord {
	cardId: string;
	epoch: number;
	agent: string;
	session: string;
	seat: number;
	kind: string;
	/** Where this attempt's output starts in the card's log. */
	logOffset: number;
	startedAt: string;
}

export function seatFilePath(dataDir: string, run: string, cardId: string): string {
	return join(dataDir, 'runs', run, `${cardId}.seat.json`);
}

export function writeSeatRecord(path: string, record: SeatRecord): void {
	writeFileWhole(path, `${JSON.stringify(record)}\n`);
}

/** The record, or undefined when there is none or it is unreadable (then the card is left to its lease). */
export function readSeatRecord(path: string): SeatRecord | undefined {
	try {
		const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<SeatRecord>;
		if (
			typeof value.cardId === 'string' &&
			typeof value.epoch === 'number' &&
			typeof value.agent === 'string' &&
			typeof value.session === 'string' &&
			typeof value.seat === 'number' &&
			typeof value.kind === 'string'
		) {
			return {
				cardId: value.cardId,
				epoch: value.epoch,
				agent: value.agent,
				session: value.session,
				seat: value.seat,
				kind: value.kind,
				logOffset: typeof value.logOffset === 'number' ? value.logOffset : 0,
				startedAt: typeof value.startedAt === 'string' ? value.startedAt : new Date().toISOString(),
			};
		}
	} catch {
		// Missing or torn: nothing to act on.
	}
	return undefined;
}

export function removeSeatFiles(dataDir: string, run: string, cardId: string): void {
	for (const suffix of ['.seat.json', '.mcp.json', '.prompt.md']) {
		rmSync(join(dataDir, 'runs', run, `${cardId}${suffix}`), { force: true });
	}
}
