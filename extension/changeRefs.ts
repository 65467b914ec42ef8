/**
 * Finds what a card's result says about its changes (Open Changes): `commit: <sha>` and
 * `branch: <name>` lines (also as `- commit = …` or `"commit": "…"`), else SHAs in the text. Pure:
 * it reads text only, never asks git whether a commit or branch exists (gitChanges.ts does).
 */

export type ChangeRef = { kind: 'commit'; sha: string } | { kind: 'branch'; name: string };

const field = /(?:^|[\s{,(])(?:[-*]\s*)?["'`]?(commit|sha|branch)["'`]?\s*[:=]\s*["'`]?([^\s"'`,]+)/gim;
const hex = /^[0-9a-f]{7,40}$/i;
/** A hex word of 7–40 characters with a letter and a digit (a bare 1234567 is more likely a number). */
const bareSha = /(?<![\w.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])/gi;
/** What git accepts in a branch name, conservatively: no `..`, no leading `-`, no trailing `.lock`. */
const branchName = /^(?!-)(?!.*\.\.)(?!.*\.lock$)[\w./@+-]{1,200}$/;

/** The commits and branches `text` names, explicit fields first, without duplicates. */
export function parseChangeRefs(text: string | null | undefined): ChangeRef[] {
	if (text === null || text === undefined || text === '') {
		return [];
	}
	const refs: ChangeRef[] = [];
	const seen = new Set<string>();
	const add = (ref: ChangeRef) => {
		const key = ref.kind === 'commit' ? `c:${ref.sha}` : `b:${ref.name}`;
		if (!seen.has(key)) {
			seen.add(key);
			refs.push(ref);
		}
	};
	for (const [, key = '', value = ''] of text.matchAll(field)) {
		const v = value.replace(/[.;)]+$/, '');
		if (key.toLowerCase() === 'branch') {
			if (branchName.test(v)) {
				add({ kind: 'branch', name: v });
			}
		} else if (hex.test(v)) {
			add({ kind: 'commit', sha: v.toLowerCase() });
		}
	}
	for (const [sha] of text.matchAll(bareSha)) {
		// A SHA that is the prefix of one already named (abc1234 and abc1234def…) is the same commit.
		const lower = sha.toLowerCase();
		if (!refs.some(r => r.kind === 'commit' && (r.sha.startsWith(lower) || lower.startsWith(r.sha)))) {
			add({ kind: 'commit', sha: lower });
		}
	}
	return refs;
}

/** "commit 1a2b3c4" or "branch feature/login", as the pickers and messages name a ref. */
export function refLabel(ref: ChangeRef): string {
	return ref.kind === 'commit' ? `commit ${ref.sha.slice(0, 7)}` : `branch ${ref.name}`;
}
