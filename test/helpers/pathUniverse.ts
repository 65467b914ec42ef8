/**
 * Every relative path of 1 to `depth` segments over `names`: a universe small enough to search
 * exhaustively for a witness (the scope tests hold the glob overlap and the matcher to picomatch on it).
 */
export function pathUniverse(names: readonly string[], depth = 4): string[] {
	const universe: string[] = [];
	const grow = (prefix: string[]): void => {
		if (prefix.length > 0) {
			universe.push(prefix.join('/'));
		}
		if (prefix.length < depth) {
			for (const n of names) {
				grow([...prefix, n]);
			}
		}
	};
	grow([]);
	return universe;
}
