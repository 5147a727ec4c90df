# Install rules and the CMake package (find_package(opforge)): cmake --install build --prefix P
# gives P/bin/opforge, P/lib/libopforge.so, libopforge_ops.so, libopforge_author.a (the authoring
# runtime op libraries link), P/include/opforge/*.h (the public headers) and P/lib/cmake/opforge.
# Everything is relative to P: binaries find their libraries through RUNPATH $ORIGIN/../lib.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OPFORGE_INSTALL_CMAKEDIR lib/cmake/opforge)
set_target_properties(opforge_cli PROPERTIES EXPORT_NAME cli)

install(TARGETS opforge opforge_author opforge_cli EXPORT opforgeTargets
        RUNTIME DESTINATION bin LIBRARY DESTINATION lib ARCHIVE DESTINATION lib)
install(TARGETS opforge_ops LIBRARY DESTINATION lib)
install(DIRECTORY include/opforge DESTINATION include FILES_MATCHING PATTERN "*.h")
install(EXPORT opforgeTargets NAMESPACE opforge:: DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})

# The plugin ABI version the installed headers define (opforge/plugin_abi.h).
file(STRINGS include/opforge/plugin_abi.h _abi REGEX "^#define OPFORGE_PLUGIN_ABI_VERSION ")
string(REGEX REPLACE ".*VERSION ([0-9]+)u?.*" "\\1" OPFORGE_PLUGIN_ABI_VERSION "${_abi}")

configure_package_config_file(cmake/opforgeConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/opforgeConfig.cmake
                              INSTALL_DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may break the API: 0.1 accepts 0.1.x only.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/opforgeConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/opforgeConfigVersion.cmake
        DESTINATION ${OPFORGE_INSTALL_CMAKEDIR})
