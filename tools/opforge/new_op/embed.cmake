# cmake -DOUT=<file.cc> -DDIR=<templates dir> -DFILES="a;b;..." -P embed.cmake
# Writes the templates of `opforge new-op` into a C++ source as raw string literals, so that the
# installed CLI needs no data files beside it.
set(_text "// Generated from tools/opforge/new_op/ by embed.cmake; do not edit.\n")
string(APPEND _text "#include \"new_op.h\"\n\nnamespace opforge::cli {\n")
string(APPEND _text "const std::vector<NewOpTemplate>& newOpTemplates() {\n")
string(APPEND _text "  static const std::vector<NewOpTemplate> t = {\n")
foreach(f ${FILES})
  file(READ "${DIR}/${f}" _body)
  string(FIND "${_body}" ")opforge_tmpl\"" _clash)
  if(NOT _clash EQUAL -1)
    message(FATAL_ERROR "${DIR}/${f} holds the raw-string delimiter )opforge_tmpl\"")
  endif()
  string(APPEND _text "      {\"${f}\", R\"opforge_tmpl(${_body})opforge_tmpl\"},\n")
endforeach()
string(APPEND _text "  };\n  return t;\n}\n}  // namespace opforge::cli\n")
file(WRITE "${OUT}.tmp" "${_text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
