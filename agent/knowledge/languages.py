"""Which files the map parses, with which grammar, and the tree-sitter queries for their symbols.

Captures named `def.<kind>` are definitions (functions, classes, methods, types, ...); captures
named `ref` are names the file uses (calls, types, imported names). Like Aider's repository map,
a file that uses a name another file defines points at that file; the ranking follows those
references. Grammars come prebuilt from `tree-sitter-language-pack`, so nothing is compiled.
"""

from __future__ import annotations

from pathlib import PurePosixPath

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".rb": "ruby",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
}

# Files worth a summary although no grammar parses them (the project's own description).
DOC_NAMES = {"readme", "readme.md", "readme.rst", "readme.txt", "agents.md", "contributing.md",
             "pyproject.toml", "package.json", "cargo.toml", "go.mod", "makefile", "dockerfile"}

_JS_COMMON = """
(function_declaration name: (identifier) @def.function)
(generator_function_declaration name: (identifier) @def.function)
(class_declaration name: (_) @def.class)
(method_definition name: (property_identifier) @def.method)
(variable_declarator name: (identifier) @def.variable value: [(arrow_function) (function_expression)])
(call_expression function: [(identifier) @ref (member_expression property: (property_identifier) @ref)])
(new_expression constructor: (identifier) @ref)
(import_specifier name: (identifier) @ref)
"""

_TS_EXTRA = """
(interface_declaration name: (type_identifier) @def.interface)
(type_alias_declaration name: (type_identifier) @def.type)
(enum_declaration name: (identifier) @def.enum)
(abstract_class_declaration name: (type_identifier) @def.class)
(type_identifier) @ref
"""

QUERIES: dict[str, str] = {
    "python": """
(class_definition name: (identifier) @def.class)
(function_definition name: (identifier) @def.function)
(call function: [(identifier) @ref (attribute attribute: (identifier) @ref)])
(import_from_statement name: (dotted_name (identifier) @ref))
(argument_list (identifier) @ref)
(type (identifier) @ref)
""",
    "javascript": _JS_COMMON,
    "typescript": _JS_COMMON + _TS_EXTRA,
    "tsx": _JS_COMMON + _TS_EXTRA,
    "go": """
(function_declaration name: (identifier) @def.function)
(method_declaration name: (field_identifier) @def.method)
(type_spec name: (type_identifier) @def.type)
(call_expression function: [(identifier) @ref (selector_expression field: (field_identifier) @ref)])
(type_identifier) @ref
""",
    "rust": """
(function_item name: (identifier) @def.function)
(struct_item name: (type_identifier) @def.struct)
(enum_item name: (type_identifier) @def.enum)
(trait_item name: (type_identifier) @def.trait)
(type_item name: (type_identifier) @def.type)
(mod_item name: (identifier) @def.module)
(macro_definition name: (identifier) @def.macro)
(call_expression function: [(identifier) @ref (scoped_identifier name: (identifier) @ref)
                            (field_expression field: (field_identifier) @ref)])
(type_identifier) @ref
""",
    "java": """
(class_declaration name: (identifier) @def.class)
(interface_declaration name: (identifier) @def.interface)
(enum_declaration name: (identifier) @def.enum)
(record_declaration name: (identifier) @def.class)
(method_declaration name: (identifier) @def.method)
(method_invocation name: (identifier) @ref)
(object_creation_expression type: (type_identifier) @ref)
(type_identifier) @ref
""",
    "ruby": """
(class name: (constant) @def.class)
(module name: (constant) @def.module)
(method name: (identifier) @def.method)
(singleton_method name: (identifier) @def.method)
(call method: (identifier) @ref)
(constant) @ref
""",
    "c": """
(function_definition declarator: (function_declarator declarator: (identifier) @def.function))
(struct_specifier name: (type_identifier) @def.struct body: (_))
(type_definition declarator: (type_identifier) @def.type)
(call_expression function: (identifier) @ref)
(type_identifier) @ref
""",
    "cpp": """
(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier)
                                                                  (qualified_identifier)] @def.function))
(class_specifier name: (type_identifier) @def.class body: (_))
(struct_specifier name: (type_identifier) @def.struct body: (_))
(call_expression function: [(identifier) @ref (field_expression field: (field_identifier) @ref)])
(type_identifier) @ref
""",
}


def language_of(path: str) -> str | None:
    """The grammar for path, or None when the map keeps it without symbols."""
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


def worth_summary(path: str) -> bool:
    """Source files and the few documents that describe a project get an AI summary."""
    return language_of(path) is not None or PurePosixPath(path).name.lower() in DOC_NAMES
