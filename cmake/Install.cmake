# What `cmake --install` puts under a prefix (docs/install.md):
#   bin/settled, bin/settle-check
#   include/settle/{sdk,core,db,signing,async}/   the SDK's headers and the ones they include
#   lib/libsettle_*.a               the SDK's rooms and the static libraries they are built on
#   lib/cmake/Settle/               find_package(Settle) -> Settle::sdk (every room), and
#                                   Settle::sdk_grpc, Settle::sdk_grpc_client (gRPC)
#   lib/pkgconfig/settle-sdk.pc     pkg-config --cflags --libs settle-sdk
#   share/doc/settle/               the docs the systemd unit and the README name
#   lib/systemd/system/settled.service, share/settle/settled.toml (the unit's configuration)
# in two components: `server` (the programs, the unit, the docs) and `dev` (the SDK). The
# Debian package (cmake/Package.cmake) adds /etc/settle/settled.toml, component `etc`, which a
# plain `cmake --install` leaves out.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# settle_sdk is the SDK's rooms as one name (participant-sdk/CMakeLists.txt): Settle::sdk links
# them all; each is exported too, as Settle::sdk_<room>, since Settle::sdk names them.
set(SETTLE_SDK_ROOM_LIBRARIES)
foreach(room IN LISTS SETTLE_SDK_ROOMS)
  list(APPEND SETTLE_SDK_ROOM_LIBRARIES settle_sdk_${room})
  set_target_properties(settle_sdk_${room} PROPERTIES EXPORT_NAME sdk_${room})
endforeach()
# The gRPC rooms stand apart (a service links them by name) with DTM's generated proto, which
# the gRPC client links privately.
foreach(room IN LISTS SETTLE_SDK_GRPC_ROOMS)
  list(APPEND SETTLE_SDK_ROOM_LIBRARIES settle_sdk_${room})
  set_target_properties(settle_sdk_${room} PROPERTIES EXPORT_NAME sdk_${room})
endforeach()
set_target_properties(settle_dtm_proto PROPERTIES EXPORT_NAME dtm_proto)
set_target_properties(settle_grpc_unary PROPERTIES EXPORT_NAME grpc_unary)
set_target_properties(settle_grpc_listen PROPERTIES EXPORT_NAME grpc_listen)
set(SETTLE_SDK_LIBRARIES settle_sdk ${SETTLE_SDK_ROOM_LIBRARIES} settle_net settle_signing
                         settle_async settle_sqlite settle_postgres settle_core settle_dtm_proto
                         settle_grpc_unary settle_grpc_listen)
set_target_properties(settle_sdk PROPERTIES EXPORT_NAME sdk)
set_target_properties(settle_net PROPERTIES EXPORT_NAME net)
set_target_properties(settle_signing PROPERTIES EXPORT_NAME signing)
set_target_properties(settle_async PROPERTIES EXPORT_NAME async)
set_target_properties(settle_sqlite PROPERTIES EXPORT_NAME sqlite)
set_target_properties(settle_postgres PROPERTIES EXPORT_NAME postgres)
set_target_properties(settle_core PROPERTIES EXPORT_NAME core)

install(TARGETS settled settle-check RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
install(TARGETS ${SETTLE_SDK_LIBRARIES} EXPORT SettleTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Each room's settle/sdk/ headers land in the one include/settle/sdk/.
set(SETTLE_SDK_INCLUDE_DIRS)
foreach(room IN LISTS SETTLE_SDK_ROOMS SETTLE_SDK_GRPC_ROOMS)
  list(APPEND SETTLE_SDK_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/participant-sdk/${room}/include/settle)
endforeach()
install(DIRECTORY ${SETTLE_SDK_INCLUDE_DIRS}
                  ${PROJECT_SOURCE_DIR}/common/core/include/settle
                  ${PROJECT_SOURCE_DIR}/common/db/include/settle
                  ${PROJECT_SOURCE_DIR}/common/signing/include/settle
                  ${PROJECT_SOURCE_DIR}/common/async/include/settle
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

install(EXPORT SettleTargets NAMESPACE Settle::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Settle COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SettleConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/SettleConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Settle)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/SettleConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/SettleConfig.cmake ${CMAKE_BINARY_DIR}/SettleConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Settle COMPONENT dev)

# pkg-config: the libraries in link order, and the system libraries they use.
# The .pc file finds the prefix from where it lies, so that the tree can be installed anywhere.
file(RELATIVE_PATH SETTLE_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/settle-sdk.pc.in ${CMAKE_BINARY_DIR}/settle-sdk.pc
               @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/settle-sdk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/operations.md
              ${PROJECT_SOURCE_DIR}/docs/protocol.md ${PROJECT_SOURCE_DIR}/docs/idempotency.md
              ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/participant-sdk/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        RENAME sdk.md COMPONENT server)

# The systemd unit, written at install time so that it names the prefix actually installed to
# (`cmake --install --prefix`, or the package's /usr).
install(CODE "
  set(SETTLE_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(SETTLE_DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/scripts/systemd/settled.service.in\"
                 \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/settled.service\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/settled.service\")
" COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/systemd/settled.toml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/settle COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/systemd/settled.toml DESTINATION /etc/settle
        COMPONENT etc EXCLUDE_FROM_ALL)
