/**
 * A landing's two writes made safe against a death between them: the base moves in git, then the
 * approval (or completion) is written in the store. Just before the base moves, the card's workspace
 * records the landing in flight (`workspace.landing`: the commit, the mode, who and how); the record
 * that follows replaces it with `landed`. When `landing` is still there — the hub died in between —
 * the commit tells: on the base, the landing happened and only its record is finished (at the hub's
 * start, or by the next approval or completion, which then land nothing twice); not on the base, it
 * never moved and the flag is dropped. Also drops the landing queue's entries of this machine's dead
 * hubs at start, so a line does not wait out their 30 s.
 * Must not: move a base or land anything (landing.ts does), or act on another host's workspace.
 */
import { hostname } from 'node:os';

import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';
import type { CardWorkspace } from '../../core/protocol';
import { gitTest } from '../workspaces/git';

const log = createLogger('hub').child('landing');

/** Whether the landing `ws` records as in flight reached its base: its commit is on the base branch. */
export async function landedAlready(ws: CardWorkspace): Promise<boolean> {
	if (ws.landing === undefined) {
		return false;
	}
	return gitTest(ws.root, ['merge-base', '--is-ancestor', ws.landing.commit, `refs/heads/${ws.base}`]).catch(
		() => false,
	);
}

/** The workspace once its landing in flight is known to have landed: `landed`, and no `landing`. */
export function withLanded(ws: CardWorkspace): CardWorkspace {
	const { landing, ...rest } = ws;
	return landing === undefined
		? rest
		: { ...rest, landed: { mode: landing.mode, commit: landing.commit, at: landing.at } };
}

/** The workspace without its landing in flight (it never moved the base). */
export function withoutLanding(ws: CardWorkspace): CardWorkspace {
	const { landing: _landing, ...rest } = ws;
	return rest;
}

/**
 * At the hub's start: finishes the record of every landing this machine's hubs left in flight (an
 * approval in review is approved as its approver; anything else gets `landed`), drops the flag of those
 * that never moved their base, and the landing queue's entries of this machine's dead hubs. Returns how
 * many landings it finished.
 */
export async function finishInterruptedLandings(backlog: Backlog, host: string = hostname()): Promise<number> {
	await dropDeadHolders(backlog, host);
	let finished = 0;
	for (const card of await backlog.landingQueue.inFlight()) {
		const ws = card.workspace;
		if (ws?.landing === undefined || ws.host !== host) {
			continue;
		}
		try {
			if (!(await landedAlready(ws))) {
				await backlog.setWorkspace({ actor: 'baton' }, card.id, withoutLanding(ws));
				continue;
			}
			const { by, via, reviewer } = ws.landing;
			if (via === 'approve' && card.status === 'review') {
				await backlog.review({ actor: by }, { cardId: card.id, approve: true }, reviewer ?? 'human', withLanded(ws));
			} else {
				await backlog.setWorkspace({ actor: 'baton' }, card.id, withLanded(ws));
			}
			finished++;
			log.info(
				`${card.id}: ${ws.branch} had landed on ${ws.base} as ${ws.landing.commit.slice(0, 12)} when the last hub stopped; its record is finished`,
			);
		} catch (e) {
			log.error(`${card.id}: finishing the record of its landing failed: ${errorText(e)}`);
		}
	}
	return finished;
}

/** The landing queue's entries of this machine's hubs whose process is gone. */
async function dropDeadHolders(backlog: Backlog, host: string): Promise<void> {
	for (const holder of await backlog.landingQueue.holders()) {
		const [h, pid] = holder.split(':');
		if (h === host && pid !== undefined && pid !== String(process.pid) && !alive(Number(pid))) {
			await backlog.landingQueue.dropHolder(holder);
		}
	}
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === 'EPERM';
	}
}
