/**
 * Stacked work under `--land none` (approved work waits in its branch for a pull request): the branch a
 * claimed card's new worktree starts from is its first dependency's unlanded branch on this host and
 * repository, so dependent work builds on work not yet merged. Must not: run git beyond finding the
 * repository's main checkout, or decide anything about landing (landing.ts does).
 */
import type { Backlog } from '../../core/backlog';
import type { Card, ProjectSettings } from '../../core/protocol';
import { inspectRepo } from '../workspaces/repo';

/**
 * The branch a claimed card's new worktree starts from when its project lands nothing itself (`--land
 * none`: approved work waits in its branch for a pull request): the branch of its first dependency, in
 * `dependsOn` order, whose workspace is on this host and repository and not landed, so stacked work
 * builds on unmerged work. Undefined: start from the project's base as usual. Pure: the caller reads
 * the dependencies (cards) and the settings.
 */
export function stackedBase(
	card: Pick<Card, 'dependsOn'>,
	dependencies: readonly Pick<Card, 'id' | 'workspace'>[],
	settings: Pick<ProjectSettings, 'land'>,
	where: { host: string; root: string },
): string | undefined {
	if (settings.land !== 'none') {
		return undefined;
	}
	for (const id of card.dependsOn) {
		const ws = dependencies.find(d => d.id === id)?.workspace;
		if (ws !== undefined && ws.landed === undefined && ws.host === where.host && ws.root === where.root) {
			return ws.branch;
		}
	}
	return undefined;
}

/**
 * `stackedBase` for a card being claimed, reading its dependencies only when it can matter (`land:
 * none` and a dependency): what the claim path calls before it makes a fresh worktree.
 */
export async function stackedBaseFor(
	backlog: Backlog,
	card: Pick<Card, 'dependsOn'>,
	settings: Pick<ProjectSettings, 'land'>,
	where: { host: string; root: string },
): Promise<string | undefined> {
	if (settings.land !== 'none' || card.dependsOn.length === 0) {
		return undefined;
	}
	const dependencies = await Promise.all(
		card.dependsOn.map(async cardId => (await backlog.get({ actor: 'hub:claim' }, { cardId })).card),
	);
	// Workspaces record the main checkout's root; the claimer may have named a linked worktree of it.
	const root = (await inspectRepo(where.root)).root;
	return stackedBase(card, dependencies, settings, { host: where.host, root });
}
