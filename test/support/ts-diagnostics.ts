import ts from 'typescript';

/** A file's own syntax and type errors in `program`, each as `line N: message` (the message cut at 300 characters). */
export function diagnosticLines(program: ts.Program, file: string): string[] {
  const source = program.getSourceFile(file);
  if (!source) return [`${file}: not in the program`];
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
    const { line } = source.getLineAndCharacterOfPosition(d.start ?? 0);
    return `line ${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ').slice(0, 300)}`;
  });
}
