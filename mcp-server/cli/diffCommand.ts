/**
 * `baton diff ID [--stat] [PATH...]`: the diff of a card's branch against its base, the same one the
 * board's Changes and VS Code show (the hub's `card/diff`: one moment's merge base and tip, the patch
 * within its byte budget). People get the patch (or with --stat a line per file and a total), scripts
 * the hub's answer under --json. A card without a branch, or whose branch already landed, gets the
 * hub's error saying what to do instead. Must not: run git itself (the hub reads the branch).
 */
import type { Result } from '../../core/protocol';
import { type Command, arg, show } from './command';
import { cliFlags } from './flags';

const diffFlags = cliFlags({
	stat: { type: 'boolean', description: 'Only the changed files with their added and removed lines, and a total' },
});

/** A big branch's diff may take the hub a while (it waits its turn with others): a minute, not 15 s. */
const diffTimeoutMs = 60_000;

/** `--stat`: one line per file ("M  src/a.ts  +3 −1"; "bin" for a binary one) and the total. */
export function statText(d: Result<'card/diff'>): string {
	if (d.files.length === 0) {
		return `${d.branch} has no change against ${d.base}.`;
	}
	const kind = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', typechange: 'T' } as const;
	const names = d.files.map(f => (f.oldPath === undefined ? f.path : `${f.oldPath} → ${f.path}`));
	const width = Math.min(60, Math.max(...names.map(n => n.length)));
	const lines = d.files.map((f, i) => {
		const counts = f.insertions === null ? 'bin' : `+${f.insertions} −${f.deletions ?? 0}`;
		return `${kind[f.status]}  ${(names[i] ?? f.path).padEnd(width)}  ${counts}`;
	});
	const plus = d.files.reduce((n, f) => n + (f.insertions ?? 0), 0);
	const minus = d.files.reduce((n, f) => n + (f.deletions ?? 0), 0);
	const count = `${d.files.length} ${d.files.length === 1 ? 'file' : 'files'}`;
	lines.push(`${count} changed, +${plus} −${minus} (${d.branch} at ${d.head.slice(0, 7)} against ${d.base})`);
	return lines.join('\n');
}

/** The patch as git wrote it, with a last line when the hub cut it (and how to see the rest). */
export function patchText(d: Result<'card/diff'>): string {
	if (d.files.length === 0) {
		return `${d.branch} has no change against ${d.base}.`;
	}
	const patch = d.patch.endsWith('\n') ? d.patch.slice(0, -1) : d.patch;
	if (!d.truncated) {
		return patch;
	}
	const cut = d.files.filter(f => f.cut === true).map(f => f.path);
	return `${patch}\n\n(The patch was cut to fit; left out or shortened: ${cut.join(', ')}. \`baton diff ${d.cardId} PATH\` shows one file whole${d.show === undefined ? '' : `; the whole diff: ${d.show}`}.)`;
}

export const diffCommand: Command = {
	name: 'diff',
	summary: "Show a card's changes against its base: the same diff the board shows (--stat: files and counts)",
	args: 'ID [PATH...]',
	minArgs: 1,
	maxArgs: Infinity,
	options: diffFlags.options,
	notes:
		"PATH: only these files (relative to the repository's root). A card has a diff from its claim in a project\n" +
		'with worktrees on until its branch lands; after that, `baton show ID` names the landed commit.',
	async run(ctx) {
		const { stat } = diffFlags.read(ctx.values);
		const paths = ctx.positionals.slice(1);
		const hub = await ctx.hub();
		const d = await hub.request(
			'card/diff',
			{ cardId: arg(ctx, 0), ...(paths.length === 0 ? {} : { paths }) },
			{ timeoutMs: diffTimeoutMs },
		);
		// --stat --json: the files without the patch, for a script that wants only the list.
		const json = stat ? { ...d, patch: undefined } : d;
		show(ctx, json, () => (stat ? statText(d) : patchText(d)));
		return 0;
	},
};
