# The layering check, run by ctest (tests `layering.includes` and
# `layering.grpc_only_in_rpc`) or by hand:
#   cmake -DSOURCE_DIR=. -DLAYER_TABLE=build/release/distflow_layers.cmake \
#         -DRULE=includes -P tests/check_layers.cmake
# LAYER_TABLE is written by src/CMakeLists.txt: LAYERS, and for each layer
# LAYER_<name>_DIRS (its folders under src/distflow), LAYER_<name>_DEPS (the
# layers it links) and LAYER_<name>_LIBS (other libraries it links).
#
# RULE=includes: a file under src/distflow may include headers of its own
#   layer and of the layers it links, directly or through others, only; a
#   generated proto header (distflow/*.pb.h) only where the layer links
#   distflow_proto, a service header (*_service.pb.h, *.grpc.pb.h) only where
#   it links distflow_grpc_proto. Every folder must belong to a layer, and a
#   folder inside another layer's folder to that same layer (cc/ops is the
#   cc layer's; a higher layer filed inside cc/ would make every include of
#   it run upward out of cc's folder). FORWARDING_DIRS (from the table)
#   hold only headers that forward to where their code moved, for code
#   outside this tree: they are exempt from the nesting rule.
# RULE=grpc: no file under src/distflow/distributed_runtime/ outside rpc/
#   includes a gRPC header (grpcpp/, grpc/, grpc++/, *.grpc.pb.h), directly
#   or through the distflow headers it includes.
cmake_minimum_required(VERSION 3.25)
foreach(v SOURCE_DIR LAYER_TABLE RULE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_layers.cmake: pass -D${v}=...")
  endif()
endforeach()
get_filename_component(SOURCE_DIR ${SOURCE_DIR} ABSOLUTE)
include(${LAYER_TABLE})
set(root ${SOURCE_DIR}/src/distflow)
set(include_re "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*")

# grpc_chain(PATH OUT): for a header "distflow/..." (or a source file),
# sets OUT to the first gRPC header it includes, directly or through other
# distflow headers ("a -> b -> grpcpp/x.h"), or to "" when it includes none.
function(grpc_chain path out)
  string(MAKE_C_IDENTIFIER "${path}" key)
  get_property(known GLOBAL PROPERTY GRPC_${key} SET)
  if(known)
    get_property(chain GLOBAL PROPERTY GRPC_${key})
    set(${out} "${chain}" PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY GRPC_${key} "")  # while visiting: cycles end here
  set(chain "")
  if(EXISTS ${SOURCE_DIR}/src/${path})
    file(STRINGS ${SOURCE_DIR}/src/${path} includes REGEX "${include_re}")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "${include_re}" "\\1" inc "${inc}")
      if(inc MATCHES "^(grpcpp|grpc|grpc\\+\\+)/" OR inc MATCHES "\\.grpc\\.pb\\.h$")
        set(chain "${inc}")
        break()
      elseif(inc MATCHES "^distflow/")
        grpc_chain(${inc} sub)
        if(sub)
          set(chain "${inc} -> ${sub}")
          break()
        endif()
      endif()
    endforeach()
  endif()
  set_property(GLOBAL PROPERTY GRPC_${key} "${chain}")
  set(${out} "${chain}" PARENT_SCOPE)
endfunction()

# Folder -> layer, and each layer's closure of what it may include.
foreach(layer IN LISTS LAYERS)
  foreach(dir IN LISTS LAYER_${layer}_DIRS)
    set(DIR_LAYER_${dir} ${layer})
  endforeach()
endforeach()
function(closure layer out)
  set(seen ${layer})
  foreach(dep IN LISTS LAYER_${layer}_DEPS)
    closure(${dep} sub)
    list(APPEND seen ${sub})
  endforeach()
  list(REMOVE_DUPLICATES seen)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()
set(errors "")
if(RULE STREQUAL "includes")
  foreach(layer IN LISTS LAYERS)
    foreach(dir IN LISTS LAYER_${layer}_DIRS)
      if(dir IN_LIST FORWARDING_DIRS)
        continue()
      endif()
      get_filename_component(parent ${dir} DIRECTORY)
      while(NOT parent STREQUAL "")
        if(DEFINED DIR_LAYER_${parent} AND NOT DIR_LAYER_${parent} STREQUAL layer)
          list(APPEND errors "src/distflow/${dir}/ (layer ${layer}) sits inside src/distflow/${parent}/ (layer ${DIR_LAYER_${parent}}): give the layer a folder of its own")
          break()
        endif()
        get_filename_component(parent ${parent} DIRECTORY)
      endwhile()
    endforeach()
  endforeach()
endif()

foreach(layer IN LISTS LAYERS)
  closure(${layer} reach)
  set(REACH_${layer} ${reach})
  set(libs "")
  foreach(l IN LISTS reach)
    list(APPEND libs ${LAYER_${l}_LIBS})
  endforeach()
  set(LIBS_${layer} ${libs})
endforeach()

file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${root} ${root}/*.h ${root}/*.cc)
list(SORT files)
foreach(file IN LISTS files)
  get_filename_component(dir ${file} DIRECTORY)
  file(STRINGS ${root}/${file} includes REGEX "${include_re}")
  if(RULE STREQUAL "grpc")
    if(NOT dir MATCHES "^distributed_runtime(/|$)" OR dir MATCHES "^distributed_runtime/rpc(/|$)")
      continue()
    endif()
    grpc_chain(distflow/${file} chain)
    if(chain)
      list(APPEND errors "src/distflow/${file}: includes ${chain} (gRPC belongs in distributed_runtime/rpc/)")
    endif()
    continue()
  elseif(NOT RULE STREQUAL "includes")
    message(FATAL_ERROR "RULE must be 'includes' or 'grpc'")
  endif()

  if(NOT DEFINED DIR_LAYER_${dir})
    list(APPEND errors "src/distflow/${file}: folder ${dir}/ is in no layer (add it to src/CMakeLists.txt)")
    continue()
  endif()
  set(layer ${DIR_LAYER_${dir}})
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE "${include_re}" "\\1" path "${inc}")
    if(NOT path MATCHES "^distflow/")
      continue()
    endif()
    get_filename_component(inc_dir ${path} DIRECTORY)
    string(REGEX REPLACE "^distflow/?" "" inc_dir "${inc_dir}")
    if(inc_dir STREQUAL "")
      # A generated proto header.
      if(path MATCHES "(_service\\.pb|\\.grpc\\.pb)\\.h$")
        set(needed distflow_grpc_proto)
      else()
        set(needed distflow_proto)
      endif()
      # distflow_grpc_proto links distflow_proto.
      if(NOT needed IN_LIST LIBS_${layer} AND
         NOT (needed STREQUAL "distflow_proto" AND "distflow_grpc_proto" IN_LIST LIBS_${layer}))
        list(APPEND errors "src/distflow/${file}: includes ${path}, but layer ${layer} does not link ${needed}")
      endif()
      continue()
    endif()
    if(NOT DEFINED DIR_LAYER_${inc_dir})
      list(APPEND errors "src/distflow/${file}: includes ${path}, whose folder is in no layer")
      continue()
    endif()
    set(inc_layer ${DIR_LAYER_${inc_dir}})
    if(NOT inc_layer IN_LIST REACH_${layer})
      list(APPEND errors "src/distflow/${file}: includes ${path} (layer ${inc_layer}), which layer ${layer} does not link")
    endif()
  endforeach()
endforeach()

list(LENGTH files nfiles)
if(errors)
  list(LENGTH errors n)
  list(JOIN errors "\n" text)
  message(NOTICE "${text}")
  message(FATAL_ERROR "${n} layering error(s) (rule '${RULE}', ${nfiles} files)")
endif()
message(STATUS "layering rule '${RULE}': ${nfiles} files, no errors")
