# The default profiles and pipelines: built into hloc (a generated table, src/engine/builtin_data.h)
# and installed under share/hloc, where hloc looks for them beside its bin/ folder.
file(GLOB HLOC_BUILTIN_CONFIGS CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/configs/*.yaml)
file(GLOB HLOC_BUILTIN_PIPELINES CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/pipelines/*.yaml)
set(HLOC_BUILTIN_FILES ${HLOC_BUILTIN_CONFIGS} ${HLOC_BUILTIN_PIPELINES})
list(TRANSFORM HLOC_BUILTIN_FILES PREPEND ${CMAKE_SOURCE_DIR}/ OUTPUT_VARIABLE HLOC_BUILTIN_DEPENDS)
set(HLOC_BUILTIN_SOURCE ${CMAKE_BINARY_DIR}/gen/builtin_data.cc)
list(JOIN HLOC_BUILTIN_FILES "," _hloc_builtin_list)
add_custom_command(
  OUTPUT ${HLOC_BUILTIN_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} "-DFILES=${_hloc_builtin_list}"
          -DOUTPUT=${HLOC_BUILTIN_SOURCE} -P ${CMAKE_SOURCE_DIR}/cmake/embed_data.cmake
  DEPENDS ${HLOC_BUILTIN_DEPENDS} ${CMAKE_SOURCE_DIR}/cmake/embed_data.cmake
  COMMENT "Embedding configs/*.yaml and pipelines/*.yaml"
  VERBATIM)
target_sources(hloc_engine PRIVATE ${HLOC_BUILTIN_SOURCE})

# cmake --install build --prefix P: P/bin/hloc, P/share/hloc/{configs,pipelines}/*.yaml.
include(GNUInstallDirs)
# Development builds link shared libraries outside the system folders (libLLVM): keep their paths.
set_target_properties(hloc PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS hloc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${HLOC_BUILTIN_CONFIGS} DESTINATION ${CMAKE_INSTALL_DATADIR}/hloc/configs)
install(FILES ${HLOC_BUILTIN_PIPELINES} DESTINATION ${CMAKE_INSTALL_DATADIR}/hloc/pipelines)
