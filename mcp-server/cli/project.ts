/**
 * The project a face works in, shared by `baton mcp` and the CLI: a `--project` flag,
 * else `BATON_PROJECT`, else the git repository of the working directory (core/client/gitRepo.ts).
 * The answer is a project id, `*` (every project: claims and lists are not narrowed, created cards
 * get none) or null outside a repository (claims then get only cards with no project). Checks what a
 * user typed with the protocol's ProjectId; it never asks the hub anything.
 */
import { type GitRepo, findGitRepo } from '../../core/client/gitRepo';
import { BatonError } from '../../core/errors';
import { ProjectId } from '../../core/protocol';
import { cliFlags } from './flags';
import { UsageError } from './output';

/** Every project: what a claim or a list sends (or leaves out) to not narrow by project. */
export const anyProject = '*';

/** A project id, `*` (any project) or null (none). `*` is never an id (ProjectId refuses it). */
export type ProjectChoice = string | null;

/** `value` as a project id or `*`; refused as invalid_input naming where it came from. */
export function checkProject(value: string, source: string): string {
	const trimmed = value.trim();
	if (trimmed === anyProject) {
		return trimmed;
	}
	const parsed = ProjectId.safeParse(trimmed);
	if (!parsed.success) {
		const why = parsed.error.issues[0]?.message ?? 'not a project id';
		throw new BatonError(
			'invalid_input',
			`${source} "${value}" is not a project id (${why}): use one like github.com/acme/web, or "*" for every project.`,
			{ field: 'project' },
		);
	}
	return parsed.data;
}

/** The flag, else BATON_PROJECT (each checked); undefined when neither says. */
export function explicitProject(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
	if (flag !== undefined) {
		return checkProject(flag, '--project');
	}
	const fromEnv = env.BATON_PROJECT;
	return fromEnv === undefined || fromEnv.trim() === '' ? undefined : checkProject(fromEnv, 'BATON_PROJECT');
}

/**
 * The project of a face started in `dir`: `explicit` (already checked) when given, else the git
 * repository's id, else null. A repository whose folder name is no valid id (a `*` in it) has none.
 */
export async function workingProject(
	dir: string,
	explicit: string | undefined,
	find: (dir: string) => Promise<GitRepo | undefined> = findGitRepo,
): Promise<ProjectChoice> {
	if (explicit !== undefined) {
		return explicit;
	}
	const inferred = (await find(dir))?.project;
	return inferred !== undefined && ProjectId.safeParse(inferred).success ? inferred : null;
}

/** `--no-project`: create/edit a card without one, claim only cards without one. */
export const noProjectFlag = cliFlags({
	noProject: {
		type: 'boolean',
		description: 'No project: a card any project may claim; on claim, only such cards',
	},
});

/**
 * What a command works in: `--no-project` (null), else `--project` (already checked by its schema),
 * else the working directory's project.
 */
export async function chosenProject(
	flag: string | null | undefined,
	none: boolean,
	working: () => Promise<ProjectChoice>,
): Promise<ProjectChoice> {
	if (none && flag !== undefined) {
		throw new UsageError('Use --project or --no-project, not both.');
	}
	if (none) {
		return null;
	}
	return flag === undefined ? working() : flag;
}
