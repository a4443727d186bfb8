/** Tags are a set: surrounding blanks and repeats are dropped. */
export const normaliseTags = (tags: string[]): string[] => [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
