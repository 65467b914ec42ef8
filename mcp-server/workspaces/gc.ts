/**
 * Clean-up of workspaces: `gcPlan` lists what may go — worktrees and `baton/` branches of
 * cards that are no longer live (landed or deleted), WIP refs older than a number of days, git's
 * records of worktree folders that are gone — and what is kept and why; `gc(plan)` deletes exactly the
 * plan's items, each only if it is still as planned (compare-and-swap on refs, the worktree's content
 * re-read), so a dry run lists exactly what gc then deletes. Never plans a worktree whose changes are
 * not snapshotted, nor a branch with commits not landed on its base, unless `force`.
 * Must not: touch a branch or folder Baton did not make, or decide which cards are live (the caller does).
 */
import { BatonError } from '../../core/errors';
import { firstLines, git, GitFailure, gitText, serialized } from './git';
import { branchPrefix, inspectRepo, listWorktrees } from './repo';
import { listWip, worktreeState } from './wip';
import { branchOwner, recordedBase } from './worktree';

export interface GcItem {
	kind: 'prune' | 'worktree' | 'branch' | 'wip';
	/** The folder (worktree, prune) or the full ref name (branch, wip). */
	target: string;
	cardId?: string;
	/** The commit a ref pointed at, or the content tree of a worktree, when planned. */
	oid?: string;
	reason: string;
}

export interface GcPlan {
	root: string;
	force: boolean;
	/** What gc deletes, in order. */
	items: GcItem[];
	/** What gc leaves, with the reason. */
	kept: GcItem[];
}

export interface GcPlanOptions {
	repo: string;
	/** True while the card exists and is not landed; workspaces of other cards may go. */
	isCardLive: (cardId: string) => boolean | Promise<boolean>;
	/** WIP refs older than this go (default 30); a live card's newest one always stays. */
	wipMaxAgeDays?: number;
	/** Now, epoch ms (default Date.now()). */
	now?: number;
	/** Delete unsnapshotted worktrees and unlanded branches of dead cards too. */
	force?: boolean;
}

/** True when merging `tip` into `base` would change nothing: its work is on the base (merged, squashed or rebased). */
async function isLanded(root: string, base: string, tip: string): Promise<boolean> {
	const baseRef = `refs/heads/${base}`;
	const merged = await git(root, ['merge-tree', '--write-tree', '--no-messages', baseRef, tip], { okCodes: [1, 128] });
	if (merged.code !== 0) {
		return false;
	}
	return merged.stdout.split('\n')[0] === (await gitText(root, ['rev-parse', `${baseRef}^{tree}`]));
}

export async function gcPlan(options: GcPlanOptions): Promise<GcPlan> {
	const repo = await inspectRepo(options.repo);
	const root = repo.root;
	const force = options.force === true;
	const now = options.now ?? Date.now();
	const maxAge = options.wipMaxAgeDays ?? 30;
	if (!Number.isFinite(maxAge) || maxAge < 0) {
		throw new BatonError('invalid_input', `The WIP age limit is a number of days ≥ 0, not ${maxAge}.`);
	}
	const live = new Map<string, boolean>();
	const isLive = async (cardId: string) => {
		let known = live.get(cardId);
		if (known === undefined) {
			known = await options.isCardLive(cardId);
			live.set(cardId, known);
		}
		return known;
	};
	const items: GcItem[] = [];
	const kept: GcItem[] = [];
	const wips = await listWip(root);
	const worktrees = await listWorktrees(root);
	// Only records of Baton's own folders are listed; `git worktree prune` then clears every stale record.
	for (const w of worktrees.filter(w => w.prunable && w.path.startsWith(`${root}/.baton/worktrees/`))) {
		items.push({ kind: 'prune', target: w.path, reason: 'the folder is gone; git still lists it' });
	}
	const branches = (
		await gitText(root, ['for-each-ref', '--format=%(refname)%09%(objectname)', `refs/heads/${branchPrefix}`])
	)
		.split('\n')
		.filter(l => l !== '');
	for (const line of branches) {
		const [ref = '', tip = ''] = line.split('\t');
		const branch = ref.slice('refs/heads/'.length);
		const cardId = await branchOwner(root, branch);
		if (cardId === undefined || (await isLive(cardId))) {
			continue; // Not Baton's, or still in use.
		}
		let worktreeKept = false;
		const wt = worktrees.find(w => !w.prunable && w.branch === ref);
		let state: Awaited<ReturnType<typeof worktreeState>> | undefined;
		if (wt !== undefined) {
			try {
				state = await worktreeState(wt.path);
			} catch (e) {
				if (!BatonError.is(e)) {
					throw e;
				}
				// Its .git is gone or points elsewhere: git there would read another repository. Left alone.
				worktreeKept = true;
				kept.push({ kind: 'worktree', target: wt.path, cardId, reason: e.message });
			}
		}
		if (wt !== undefined && state !== undefined) {
			const dirty = state.tree !== state.headTree;
			const snapshot = dirty
				? await snapshotOf(
						root,
						wips.filter(r => r.cardId === cardId).map(r => r.ref),
						state.tree,
					)
				: undefined;
			const item: GcItem = {
				kind: 'worktree',
				target: wt.path,
				cardId,
				oid: state.tree,
				reason: `card ${cardId} is not live`,
			};
			if (dirty && snapshot === undefined && !force) {
				worktreeKept = true;
				kept.push({ ...item, reason: 'it has changes that are not snapshotted; snapshot them or use --force' });
			} else {
				items.push(
					dirty
						? { ...item, reason: `${item.reason}; its changes are in ${snapshot ?? 'no snapshot (--force)'}` }
						: item,
				);
			}
		}
		const base = (await recordedBase(root, branch)) ?? repo.defaultBranch;
		const landed = base !== undefined && (await isLanded(root, base, tip));
		const item: GcItem = { kind: 'branch', target: ref, cardId, oid: tip, reason: `card ${cardId} is not live` };
		if (worktreeKept) {
			kept.push({ ...item, reason: 'its worktree is kept' });
		} else if (!landed && !force) {
			kept.push({ ...item, reason: `it has commits not landed on ${base ?? 'its base'}; land them or use --force` });
		} else {
			items.push(landed ? { ...item, reason: `${item.reason}; its work is on ${base}` } : item);
		}
	}
	const newest = new Map<string, string>();
	for (const w of wips) {
		newest.set(w.cardId, w.ref);
	}
	for (const w of wips) {
		const ageDays = (now / 1000 - w.time) / 86_400;
		if (ageDays <= maxAge) {
			continue;
		}
		const item: GcItem = {
			kind: 'wip',
			target: w.ref,
			cardId: w.cardId,
			oid: w.commit,
			reason: `older than ${maxAge} days`,
		};
		if (newest.get(w.cardId) === w.ref && (await isLive(w.cardId))) {
			kept.push({ ...item, reason: `the newest snapshot of live card ${w.cardId}` });
		} else {
			items.push(item);
		}
	}
	return { root, force, items, kept };
}

/** The first of `refs` whose snapshot holds exactly `tree`. */
async function snapshotOf(root: string, refs: readonly string[], tree: string): Promise<string | undefined> {
	for (const ref of [...refs].reverse()) {
		if ((await gitText(root, ['rev-parse', `${ref}^{tree}`])) === tree) {
			return ref;
		}
	}
	return undefined;
}

/**
 * Deletes the plan's items in order. An item that changed since the plan (a ref moved, a worktree's
 * content changed, a folder reappeared) is skipped and reported, never deleted.
 */
export async function gc(plan: GcPlan): Promise<{ deleted: GcItem[]; skipped: (GcItem & { why: string })[] }> {
	const repo = await inspectRepo(plan.root);
	return serialized(repo.commonDir, async () => {
		const deleted: GcItem[] = [];
		const skipped: (GcItem & { why: string })[] = [];
		const worktrees = await listWorktrees(plan.root);
		const failedWorktrees = new Set<string>();
		for (const item of plan.items) {
			try {
				const why = await deleteItem(plan, item, worktrees, failedWorktrees);
				if (why === undefined) {
					deleted.push(item);
				} else {
					skipped.push({ ...item, why });
					if (item.kind === 'worktree' && item.cardId !== undefined) {
						failedWorktrees.add(item.cardId);
					}
				}
			} catch (e) {
				if (BatonError.is(e)) {
					skipped.push({ ...item, why: e.message });
					if (item.kind === 'worktree' && item.cardId !== undefined) {
						failedWorktrees.add(item.cardId);
					}
					continue;
				}
				if (!(e instanceof GitFailure)) {
					throw e;
				}
				skipped.push({ ...item, why: firstLines(e.stderr, 1) });
			}
		}
		return { deleted, skipped };
	});
}

async function deleteItem(
	plan: GcPlan,
	item: GcItem,
	worktrees: Awaited<ReturnType<typeof listWorktrees>>,
	failedWorktrees: ReadonlySet<string>,
): Promise<string | undefined> {
	switch (item.kind) {
		case 'prune':
			await git(plan.root, ['worktree', 'prune']);
			return undefined;
		case 'worktree': {
			const entry = worktrees.find(w => w.path === item.target && !w.prunable);
			if (entry === undefined) {
				return 'it is no longer a worktree';
			}
			const state = await worktreeState(item.target);
			if (state.tree !== item.oid) {
				return 'its files changed since the plan';
			}
			await git(plan.root, ['worktree', 'remove', ...(state.tree === state.headTree ? [] : ['--force']), item.target]);
			return undefined;
		}
		case 'branch': {
			if (item.cardId !== undefined && failedWorktrees.has(item.cardId)) {
				return 'its worktree was kept';
			}
			const branch = item.target.slice('refs/heads/'.length);
			await git(plan.root, ['update-ref', '-d', item.target, item.oid ?? '']);
			await git(plan.root, ['config', '--remove-section', `branch.${branch}`], { okCodes: [1, 128] });
			return undefined;
		}
		case 'wip':
			await git(plan.root, ['update-ref', '-d', item.target, item.oid ?? '']);
			return undefined;
	}
}
