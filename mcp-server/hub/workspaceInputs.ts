/**
 * The two inputs of a claim's workspace that a claimer can name, checked by the hub against the
 * repository itself (never against what the session declares): `root`, which must be a checkout of
 * the card's project, and the base a new branch starts from, which must be a branch of the project
 * that is not another live card's (landing into it would write into that card's worktree).
 * Must not: create or change anything in git, or decide where a worktree goes (claimWorkspace.ts does).
 */
import path from 'node:path';

import type { Backlog } from '../../core/backlog';
import { projectIdFromFolder, projectIdFromRemote } from '../../core/client/projectId';
import { BatonError } from '../../core/errors';
import { git } from '../workspaces/git';
import { branchOwner } from '../workspaces/worktree';

interface RepoProject {
	root: string;
	project: string;
	fromRemote: boolean;
}

/** Answers of projectOf by folder for a few seconds: twenty claims at once from one checkout ask once. */
const known = new Map<string, { until: number; answer: Promise<RepoProject | undefined> }>();
const knownForMs = 10_000;

/** The main checkout of the repository at `dir` and the project id the repository itself gives. */
function projectOf(dir: string): Promise<RepoProject | undefined> {
	const now = Date.now();
	const cached = known.get(dir);
	if (cached !== undefined && cached.until > now) {
		return cached.answer;
	}
	const answer = readProjectOf(dir);
	known.set(dir, { until: now + knownForMs, answer });
	if (known.size > 256) {
		for (const [key, value] of known) {
			if (value.until <= now) {
				known.delete(key);
			}
		}
	}
	return answer;
}

async function readProjectOf(dir: string): Promise<RepoProject | undefined> {
	// Two git runs: the first worktree listed is the main checkout, whatever folder of the repository `dir` is.
	const list = await git(dir, ['worktree', 'list', '--porcelain', '-z'], { okCodes: [128] }).catch(() => undefined);
	if (list?.code !== 0) {
		return undefined;
	}
	const first = list.stdout.split('\0').find(f => f.startsWith('worktree '));
	if (first === undefined || list.stdout.split('\0').includes('bare')) {
		return undefined;
	}
	const root = path.resolve(first.slice('worktree '.length));
	const remote = await git(root, ['config', '--get', 'remote.origin.url'], { okCodes: [1] });
	const fromRemote = remote.code === 0 ? projectIdFromRemote(remote.stdout.trim()) : undefined;
	return { root, project: fromRemote ?? projectIdFromFolder(root), fromRemote: fromRemote !== undefined };
}

/**
 * Whether `given` (an absolute path a claim named) is a checkout of `project` by the repository's own
 * account: its `origin` names the project, or (no such remote) its folder does and it is the checkout
 * this machine recorded for the project. A folder name alone would let any repository of that name pass.
 */
export async function isProjectCheckout(
	given: string,
	project: string,
	recorded: string | undefined,
): Promise<boolean> {
	const found = await projectOf(given);
	if (found?.project !== project) {
		return false;
	}
	if (found.fromRemote || recorded === undefined) {
		return true;
	}
	const mine = await projectOf(recorded);
	return mine?.root === found.root;
}

/** The refusal of a `root` that is not a checkout of the card's project. */
export function rootOutsideProject(given: string, cardId: string, project: string): BatonError {
	return new BatonError(
		'invalid_input',
		`root ${given} is not a checkout of project ${project} (its repository says otherwise), so card ${cardId} gets no worktree there; nothing was changed. Claim from inside a checkout of ${project}, or leave root out to use the one this machine recorded (\`baton settings --worktrees on\` inside it).`,
		{ field: 'root', cardId, project },
	);
}

/**
 * Throws unless `base` may start card `cardId`'s branch in the repository at `root`: a valid branch
 * name, not the card's own branch, and not the branch of another card that is still live (exists and
 * is not done). A done card's unlanded branch (a `--land none` dependency) may be built on.
 */
export async function checkBase(backlog: Backlog, root: string, cardId: string, base: string): Promise<void> {
	const format = await git(root, ['check-ref-format', `refs/heads/${base}`], { okCodes: [1] });
	if (format.code !== 0 || base.startsWith('-')) {
		throw new BatonError(
			'invalid_input',
			`Base "${base}" is not a branch name. Name an existing branch (\`git branch --list\`), e.g. \`baton edit ${cardId} --base main\`.`,
			{ field: 'base', cardId, base },
		);
	}
	const owner = await branchOwner(root, base);
	if (owner === undefined) {
		return;
	}
	if (owner === cardId) {
		throw new BatonError(
			'invalid_input',
			`Base "${base}" is card ${cardId}'s own branch; a branch cannot start from or land on itself. Name the branch it should start from (\`baton edit ${cardId} --base main\`).`,
			{ field: 'base', cardId, base },
		);
	}
	let live = false;
	try {
		live = (await backlog.get({ actor: 'hub:claim' }, { cardId: owner })).card.status !== 'done';
	} catch (e) {
		if (!BatonError.is(e, 'not_found')) {
			throw e;
		}
	}
	if (live) {
		throw new BatonError(
			'invalid_input',
			`Base "${base}" is the branch of card ${owner}, which is still being worked on: landing card ${cardId} there would write into ${owner}'s worktree. Start from a branch of the project (\`baton edit ${cardId} --base main\`), or wait until ${owner} is done.`,
			{ field: 'base', cardId, base, owner },
		);
	}
}
