* Source:     Pyomo MPS Writer
* Format:     Free MPS
*
NAME bace_opt_P1_placement
OBJSENSE
 MIN
ROWS
 N  obj_count
 L  c_u_con_position_one(0_1)_
 L  c_u_con_position_one(0_2)_
 L  c_u_con_position_one(0_3)_
 L  c_u_con_position_one(0_4)_
 L  c_u_con_position_one(1_1)_
 L  c_u_con_position_one(1_2)_
 L  c_u_con_position_one(1_3)_
 L  c_u_con_position_one(1_4)_
 L  c_u_con_position_one(2_1)_
 L  c_u_con_position_one(2_2)_
 E  c_e_con_position_first(0)_
 E  c_e_con_position_first(1)_
 E  c_e_con_position_first(2)_
 L  c_u_con_position_contiguous(0_1)_
 L  c_u_con_position_contiguous(0_2)_
 L  c_u_con_position_contiguous(0_3)_
 L  c_u_con_position_contiguous(1_1)_
 L  c_u_con_position_contiguous(1_2)_
 L  c_u_con_position_contiguous(1_3)_
 L  c_u_con_position_contiguous(2_1)_
 L  c_u_con_region_once(0_0)_
 L  c_u_con_region_once(0_1)_
 L  c_u_con_region_once(0_2)_
 L  c_u_con_region_once(0_3)_
 L  c_u_con_region_once(1_0)_
 L  c_u_con_region_once(1_1)_
 L  c_u_con_region_once(1_2)_
 L  c_u_con_region_once(1_3)_
 L  c_u_con_region_once(2_0)_
 L  c_u_con_region_once(2_1)_
 L  c_u_con_region_once(2_2)_
 L  c_u_con_region_once(2_3)_
 E  c_e_con_stages_total(0)_
 E  c_e_con_stages_total(1)_
 E  c_e_con_stages_total(2)_
 L  c_u_con_stages_min(0_0)_
 L  c_u_con_stages_min(0_1)_
 L  c_u_con_stages_min(0_2)_
 L  c_u_con_stages_min(0_3)_
 L  c_u_con_stages_min(1_0)_
 L  c_u_con_stages_min(1_1)_
 L  c_u_con_stages_min(1_2)_
 L  c_u_con_stages_min(1_3)_
 L  c_u_con_stages_min(2_0)_
 L  c_u_con_stages_min(2_1)_
 L  c_u_con_stages_min(2_2)_
 L  c_u_con_stages_min(2_3)_
 L  c_u_con_stages_max(0_0)_
 L  c_u_con_stages_max(0_1)_
 L  c_u_con_stages_max(0_2)_
 L  c_u_con_stages_max(0_3)_
 L  c_u_con_stages_max(1_0)_
 L  c_u_con_stages_max(1_1)_
 L  c_u_con_stages_max(1_2)_
 L  c_u_con_stages_max(1_3)_
 L  c_u_con_stages_max(2_0)_
 L  c_u_con_stages_max(2_1)_
 L  c_u_con_stages_max(2_2)_
 L  c_u_con_stages_max(2_3)_
 L  c_u_con_hop_source_le(0_1_0)_
 L  c_u_con_hop_source_le(0_1_1)_
 L  c_u_con_hop_source_le(0_1_2)_
 L  c_u_con_hop_source_le(0_1_3)_
 L  c_u_con_hop_source_le(0_2_0)_
 L  c_u_con_hop_source_le(0_2_1)_
 L  c_u_con_hop_source_le(0_2_2)_
 L  c_u_con_hop_source_le(0_2_3)_
 L  c_u_con_hop_source_le(0_3_0)_
 L  c_u_con_hop_source_le(0_3_1)_
 L  c_u_con_hop_source_le(0_3_2)_
 L  c_u_con_hop_source_le(0_3_3)_
 L  c_u_con_hop_source_le(1_1_0)_
 L  c_u_con_hop_source_le(1_1_1)_
 L  c_u_con_hop_source_le(1_1_2)_
 L  c_u_con_hop_source_le(1_1_3)_
 L  c_u_con_hop_source_le(1_2_0)_
 L  c_u_con_hop_source_le(1_2_1)_
 L  c_u_con_hop_source_le(1_2_2)_
 L  c_u_con_hop_source_le(1_2_3)_
 L  c_u_con_hop_source_le(1_3_0)_
 L  c_u_con_hop_source_le(1_3_1)_
 L  c_u_con_hop_source_le(1_3_2)_
 L  c_u_con_hop_source_le(1_3_3)_
 L  c_u_con_hop_source_le(2_1_0)_
 L  c_u_con_hop_source_le(2_1_1)_
 L  c_u_con_hop_source_le(2_1_2)_
 L  c_u_con_hop_source_le(2_1_3)_
 E  c_e_con_hop_source_one(0_1)_
 E  c_e_con_hop_source_one(0_2)_
 E  c_e_con_hop_source_one(0_3)_
 E  c_e_con_hop_source_one(1_1)_
 E  c_e_con_hop_source_one(1_2)_
 E  c_e_con_hop_source_one(1_3)_
 E  c_e_con_hop_source_one(2_1)_
 E  c_e_con_flow(0_1_0)_
 E  c_e_con_flow(0_1_1)_
 E  c_e_con_flow(0_1_2)_
 E  c_e_con_flow(0_1_3)_
 E  c_e_con_flow(0_2_0)_
 E  c_e_con_flow(0_2_1)_
 E  c_e_con_flow(0_2_2)_
 E  c_e_con_flow(0_2_3)_
 E  c_e_con_flow(0_3_0)_
 E  c_e_con_flow(0_3_1)_
 E  c_e_con_flow(0_3_2)_
 E  c_e_con_flow(0_3_3)_
 E  c_e_con_flow(1_1_0)_
 E  c_e_con_flow(1_1_1)_
 E  c_e_con_flow(1_1_2)_
 E  c_e_con_flow(1_1_3)_
 E  c_e_con_flow(1_2_0)_
 E  c_e_con_flow(1_2_1)_
 E  c_e_con_flow(1_2_2)_
 E  c_e_con_flow(1_2_3)_
 E  c_e_con_flow(1_3_0)_
 E  c_e_con_flow(1_3_1)_
 E  c_e_con_flow(1_3_2)_
 E  c_e_con_flow(1_3_3)_
 E  c_e_con_flow(2_1_0)_
 E  c_e_con_flow(2_1_1)_
 E  c_e_con_flow(2_1_2)_
 E  c_e_con_flow(2_1_3)_
 L  c_u_con_flow_in(2_1_0)_
 L  c_u_con_flow_in(2_1_1)_
 L  c_u_con_flow_in(2_1_2)_
 L  c_u_con_flow_in(2_1_3)_
 L  c_u_con_flow_out(2_1_0)_
 L  c_u_con_flow_out(2_1_1)_
 L  c_u_con_flow_out(2_1_2)_
 L  c_u_con_flow_out(2_1_3)_
 L  c_u_con_link_once(0_1_0)_
 L  c_u_con_link_once(0_2_0)_
 L  c_u_con_link_once(0_3_0)_
 L  c_u_con_link_once(1_1_0)_
 L  c_u_con_link_once(1_2_0)_
 L  c_u_con_link_once(1_3_0)_
 L  c_u_con_link_once(2_1_0)_
 L  c_u_con_link_once(2_1_1)_
 L  c_u_con_link_once(2_1_2)_
 L  c_u_con_link_once(2_1_3)_
 L  c_u_con_link_once(2_1_4)_
 L  c_u_con_link_once(2_1_5)_
 L  c_u_con_gpus(0)_
 L  c_u_con_gpus(1)_
 L  c_u_con_gpus(2)_
 L  c_u_con_gpus(3)_
 L  c_u_con_bandwidth(0)_
 L  c_u_con_bandwidth(1)_
 L  c_u_con_bandwidth(2)_
 L  c_u_con_bandwidth(3)_
 L  c_u_con_bandwidth(4)_
 L  c_u_con_bandwidth(5)_
 L  c_u_con_cost_product(0_1_0)_
 L  c_u_con_cost_product(0_2_0)_
 L  c_u_con_cost_product(0_3_0)_
 L  c_u_con_cost_product(1_1_0)_
 L  c_u_con_cost_product(1_2_0)_
 L  c_u_con_cost_product(1_3_0)_
 L  c_u_con_cost_product(2_1_0)_
 L  c_u_con_cost_product(2_1_1)_
 L  c_u_con_cost_product(2_1_2)_
 L  c_u_con_cost_product(2_1_3)_
 L  c_u_con_cost_product(2_1_4)_
 L  c_u_con_cost_product(2_1_5)_
 L  c_u_con_cost_product_min(0_1_0)_
 L  c_u_con_cost_product_min(0_2_0)_
 L  c_u_con_cost_product_min(0_3_0)_
 L  c_u_con_cost_product_min(1_1_0)_
 L  c_u_con_cost_product_min(1_2_0)_
 L  c_u_con_cost_product_min(1_3_0)_
 L  c_u_con_cost_product_min(2_1_0)_
 L  c_u_con_cost_product_min(2_1_1)_
 L  c_u_con_cost_product_min(2_1_2)_
 L  c_u_con_cost_product_min(2_1_3)_
 L  c_u_con_cost_product_min(2_1_4)_
 L  c_u_con_cost_product_min(2_1_5)_
 L  c_u_con_sym_reverse(0)_
 L  c_u_con_sym_reverse(1)_
 L  c_u_con_sym_reverse(2)_
 L  c_u_con_sym_jobs(0_1)_
COLUMNS
     x(0) obj_count -1
     x(0) c_e_con_position_first(0)_ -1
     x(0) c_e_con_stages_total(0)_ -4
     x(0) c_u_con_sym_jobs(0_1)_ -1
     x(1) obj_count -1
     x(1) c_e_con_position_first(1)_ -1
     x(1) c_e_con_stages_total(1)_ -4
     x(1) c_u_con_sym_jobs(0_1)_ 1
     x(2) obj_count -1
     x(2) c_e_con_position_first(2)_ -1
     x(2) c_e_con_stages_total(2)_ -2
     a(0_1_0) c_u_con_position_one(0_1)_ 1
     a(0_1_0) c_e_con_position_first(0)_ 1
     a(0_1_0) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_0) c_u_con_region_once(0_0)_ 1
     a(0_1_0) c_u_con_stages_min(0_0)_ 1
     a(0_1_0) c_u_con_stages_max(0_0)_ -3
     a(0_1_0) c_u_con_hop_source_le(0_1_0)_ -1
     a(0_1_1) c_u_con_position_one(0_1)_ 1
     a(0_1_1) c_e_con_position_first(0)_ 1
     a(0_1_1) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_1) c_u_con_region_once(0_1)_ 1
     a(0_1_1) c_u_con_stages_min(0_1)_ 1
     a(0_1_1) c_u_con_stages_max(0_1)_ -3
     a(0_1_1) c_u_con_hop_source_le(0_1_1)_ -1
     a(0_1_2) c_u_con_position_one(0_1)_ 1
     a(0_1_2) c_e_con_position_first(0)_ 1
     a(0_1_2) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_2) c_u_con_region_once(0_2)_ 1
     a(0_1_2) c_u_con_stages_min(0_2)_ 1
     a(0_1_2) c_u_con_stages_max(0_2)_ -3
     a(0_1_2) c_u_con_hop_source_le(0_1_2)_ -1
     a(0_1_3) c_u_con_position_one(0_1)_ 1
     a(0_1_3) c_e_con_position_first(0)_ 1
     a(0_1_3) c_u_con_position_contiguous(0_1)_ -1
     a(0_1_3) c_u_con_region_once(0_3)_ 1
     a(0_1_3) c_u_con_stages_min(0_3)_ 1
     a(0_1_3) c_u_con_stages_max(0_3)_ -3
     a(0_1_3) c_u_con_hop_source_le(0_1_3)_ -1
     a(0_2_0) c_u_con_position_one(0_2)_ 1
     a(0_2_0) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_0) c_u_con_position_contiguous(0_2)_ -1
     a(0_2_0) c_u_con_region_once(0_0)_ 1
     a(0_2_0) c_u_con_stages_min(0_0)_ 1
     a(0_2_0) c_u_con_stages_max(0_0)_ -3
     a(0_2_0) c_u_con_hop_source_le(0_2_0)_ -1
     a(0_2_0) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_0) c_e_con_flow(0_1_0)_ 1
     a(0_2_1) c_u_con_position_one(0_2)_ 1
     a(0_2_1) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_1) c_u_con_position_contiguous(0_2)_ -1
     a(0_2_1) c_u_con_region_once(0_1)_ 1
     a(0_2_1) c_u_con_stages_min(0_1)_ 1
     a(0_2_1) c_u_con_stages_max(0_1)_ -3
     a(0_2_1) c_u_con_hop_source_le(0_2_1)_ -1
     a(0_2_1) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_1) c_e_con_flow(0_1_1)_ 1
     a(0_2_1) c_u_con_sym_reverse(0)_ -1
     a(0_2_2) c_u_con_position_one(0_2)_ 1
     a(0_2_2) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_2) c_u_con_position_contiguous(0_2)_ -1
     a(0_2_2) c_u_con_region_once(0_2)_ 1
     a(0_2_2) c_u_con_stages_min(0_2)_ 1
     a(0_2_2) c_u_con_stages_max(0_2)_ -3
     a(0_2_2) c_u_con_hop_source_le(0_2_2)_ -1
     a(0_2_2) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_2) c_e_con_flow(0_1_2)_ -1
     a(0_2_2) c_u_con_sym_reverse(0)_ -2
     a(0_2_3) c_u_con_position_one(0_2)_ 1
     a(0_2_3) c_u_con_position_contiguous(0_1)_ 1
     a(0_2_3) c_u_con_position_contiguous(0_2)_ -1
     a(0_2_3) c_u_con_region_once(0_3)_ 1
     a(0_2_3) c_u_con_stages_min(0_3)_ 1
     a(0_2_3) c_u_con_stages_max(0_3)_ -3
     a(0_2_3) c_u_con_hop_source_le(0_2_3)_ -1
     a(0_2_3) c_e_con_hop_source_one(0_1)_ -1
     a(0_2_3) c_e_con_flow(0_1_3)_ -1
     a(0_2_3) c_u_con_sym_reverse(0)_ -3
     a(0_3_0) c_u_con_position_one(0_3)_ 1
     a(0_3_0) c_u_con_position_contiguous(0_2)_ 1
     a(0_3_0) c_u_con_position_contiguous(0_3)_ -1
     a(0_3_0) c_u_con_region_once(0_0)_ 1
     a(0_3_0) c_u_con_stages_min(0_0)_ 1
     a(0_3_0) c_u_con_stages_max(0_0)_ -3
     a(0_3_0) c_u_con_hop_source_le(0_3_0)_ -1
     a(0_3_0) c_e_con_hop_source_one(0_2)_ -1
     a(0_3_0) c_e_con_flow(0_2_0)_ 1
     a(0_3_1) c_u_con_position_one(0_3)_ 1
     a(0_3_1) c_u_con_position_contiguous(0_2)_ 1
     a(0_3_1) c_u_con_position_contiguous(0_3)_ -1
     a(0_3_1) c_u_con_region_once(0_1)_ 1
     a(0_3_1) c_u_con_stages_min(0_1)_ 1
     a(0_3_1) c_u_con_stages_max(0_1)_ -3
     a(0_3_1) c_u_con_hop_source_le(0_3_1)_ -1
     a(0_3_1) c_e_con_hop_source_one(0_2)_ -1
     a(0_3_1) c_e_con_flow(0_2_1)_ 1
     a(0_3_1) c_u_con_sym_reverse(0)_ -1
     a(0_3_2) c_u_con_position_one(0_3)_ 1
     a(0_3_2) c_u_con_position_contiguous(0_2)_ 1
     a(0_3_2) c_u_con_position_contiguous(0_3)_ -1
     a(0_3_2) c_u_con_region_once(0_2)_ 1
     a(0_3_2) c_u_con_stages_min(0_2)_ 1
     a(0_3_2) c_u_con_stages_max(0_2)_ -3
     a(0_3_2) c_u_con_hop_source_le(0_3_2)_ -1
     a(0_3_2) c_e_con_hop_source_one(0_2)_ -1
     a(0_3_2) c_e_con_flow(0_2_2)_ -1
     a(0_3_2) c_u_con_sym_reverse(0)_ -2
     a(0_3_3) c_u_con_position_one(0_3)_ 1
     a(0_3_3) c_u_con_position_contiguous(0_2)_ 1
     a(0_3_3) c_u_con_position_contiguous(0_3)_ -1
     a(0_3_3) c_u_con_region_once(0_3)_ 1
     a(0_3_3) c_u_con_stages_min(0_3)_ 1
     a(0_3_3) c_u_con_stages_max(0_3)_ -3
     a(0_3_3) c_u_con_hop_source_le(0_3_3)_ -1
     a(0_3_3) c_e_con_hop_source_one(0_2)_ -1
     a(0_3_3) c_e_con_flow(0_2_3)_ -1
     a(0_3_3) c_u_con_sym_reverse(0)_ -3
     a(0_4_0) c_u_con_position_one(0_4)_ 1
     a(0_4_0) c_u_con_position_contiguous(0_3)_ 1
     a(0_4_0) c_u_con_region_once(0_0)_ 1
     a(0_4_0) c_u_con_stages_min(0_0)_ 1
     a(0_4_0) c_u_con_stages_max(0_0)_ -3
     a(0_4_0) c_e_con_hop_source_one(0_3)_ -1
     a(0_4_0) c_e_con_flow(0_3_0)_ 1
     a(0_4_1) c_u_con_position_one(0_4)_ 1
     a(0_4_1) c_u_con_position_contiguous(0_3)_ 1
     a(0_4_1) c_u_con_region_once(0_1)_ 1
     a(0_4_1) c_u_con_stages_min(0_1)_ 1
     a(0_4_1) c_u_con_stages_max(0_1)_ -3
     a(0_4_1) c_e_con_hop_source_one(0_3)_ -1
     a(0_4_1) c_e_con_flow(0_3_1)_ 1
     a(0_4_1) c_u_con_sym_reverse(0)_ -1
     a(0_4_2) c_u_con_position_one(0_4)_ 1
     a(0_4_2) c_u_con_position_contiguous(0_3)_ 1
     a(0_4_2) c_u_con_region_once(0_2)_ 1
     a(0_4_2) c_u_con_stages_min(0_2)_ 1
     a(0_4_2) c_u_con_stages_max(0_2)_ -3
     a(0_4_2) c_e_con_hop_source_one(0_3)_ -1
     a(0_4_2) c_e_con_flow(0_3_2)_ -1
     a(0_4_2) c_u_con_sym_reverse(0)_ -2
     a(0_4_3) c_u_con_position_one(0_4)_ 1
     a(0_4_3) c_u_con_position_contiguous(0_3)_ 1
     a(0_4_3) c_u_con_region_once(0_3)_ 1
     a(0_4_3) c_u_con_stages_min(0_3)_ 1
     a(0_4_3) c_u_con_stages_max(0_3)_ -3
     a(0_4_3) c_e_con_hop_source_one(0_3)_ -1
     a(0_4_3) c_e_con_flow(0_3_3)_ -1
     a(0_4_3) c_u_con_sym_reverse(0)_ -3
     a(1_1_0) c_u_con_position_one(1_1)_ 1
     a(1_1_0) c_e_con_position_first(1)_ 1
     a(1_1_0) c_u_con_position_contiguous(1_1)_ -1
     a(1_1_0) c_u_con_region_once(1_0)_ 1
     a(1_1_0) c_u_con_stages_min(1_0)_ 1
     a(1_1_0) c_u_con_stages_max(1_0)_ -3
     a(1_1_0) c_u_con_hop_source_le(1_1_0)_ -1
     a(1_1_1) c_u_con_position_one(1_1)_ 1
     a(1_1_1) c_e_con_position_first(1)_ 1
     a(1_1_1) c_u_con_position_contiguous(1_1)_ -1
     a(1_1_1) c_u_con_region_once(1_1)_ 1
     a(1_1_1) c_u_con_stages_min(1_1)_ 1
     a(1_1_1) c_u_con_stages_max(1_1)_ -3
     a(1_1_1) c_u_con_hop_source_le(1_1_1)_ -1
     a(1_1_2) c_u_con_position_one(1_1)_ 1
     a(1_1_2) c_e_con_position_first(1)_ 1
     a(1_1_2) c_u_con_position_contiguous(1_1)_ -1
     a(1_1_2) c_u_con_region_once(1_2)_ 1
     a(1_1_2) c_u_con_stages_min(1_2)_ 1
     a(1_1_2) c_u_con_stages_max(1_2)_ -3
     a(1_1_2) c_u_con_hop_source_le(1_1_2)_ -1
     a(1_1_3) c_u_con_position_one(1_1)_ 1
     a(1_1_3) c_e_con_position_first(1)_ 1
     a(1_1_3) c_u_con_position_contiguous(1_1)_ -1
     a(1_1_3) c_u_con_region_once(1_3)_ 1
     a(1_1_3) c_u_con_stages_min(1_3)_ 1
     a(1_1_3) c_u_con_stages_max(1_3)_ -3
     a(1_1_3) c_u_con_hop_source_le(1_1_3)_ -1
     a(1_2_0) c_u_con_position_one(1_2)_ 1
     a(1_2_0) c_u_con_position_contiguous(1_1)_ 1
     a(1_2_0) c_u_con_position_contiguous(1_2)_ -1
     a(1_2_0) c_u_con_region_once(1_0)_ 1
     a(1_2_0) c_u_con_stages_min(1_0)_ 1
     a(1_2_0) c_u_con_stages_max(1_0)_ -3
     a(1_2_0) c_u_con_hop_source_le(1_2_0)_ -1
     a(1_2_0) c_e_con_hop_source_one(1_1)_ -1
     a(1_2_0) c_e_con_flow(1_1_0)_ 1
     a(1_2_1) c_u_con_position_one(1_2)_ 1
     a(1_2_1) c_u_con_position_contiguous(1_1)_ 1
     a(1_2_1) c_u_con_position_contiguous(1_2)_ -1
     a(1_2_1) c_u_con_region_once(1_1)_ 1
     a(1_2_1) c_u_con_stages_min(1_1)_ 1
     a(1_2_1) c_u_con_stages_max(1_1)_ -3
     a(1_2_1) c_u_con_hop_source_le(1_2_1)_ -1
     a(1_2_1) c_e_con_hop_source_one(1_1)_ -1
     a(1_2_1) c_e_con_flow(1_1_1)_ 1
     a(1_2_1) c_u_con_sym_reverse(1)_ -1
     a(1_2_2) c_u_con_position_one(1_2)_ 1
     a(1_2_2) c_u_con_position_contiguous(1_1)_ 1
     a(1_2_2) c_u_con_position_contiguous(1_2)_ -1
     a(1_2_2) c_u_con_region_once(1_2)_ 1
     a(1_2_2) c_u_con_stages_min(1_2)_ 1
     a(1_2_2) c_u_con_stages_max(1_2)_ -3
     a(1_2_2) c_u_con_hop_source_le(1_2_2)_ -1
     a(1_2_2) c_e_con_hop_source_one(1_1)_ -1
     a(1_2_2) c_e_con_flow(1_1_2)_ -1
     a(1_2_2) c_u_con_sym_reverse(1)_ -2
     a(1_2_3) c_u_con_position_one(1_2)_ 1
     a(1_2_3) c_u_con_position_contiguous(1_1)_ 1
     a(1_2_3) c_u_con_position_contiguous(1_2)_ -1
     a(1_2_3) c_u_con_region_once(1_3)_ 1
     a(1_2_3) c_u_con_stages_min(1_3)_ 1
     a(1_2_3) c_u_con_stages_max(1_3)_ -3
     a(1_2_3) c_u_con_hop_source_le(1_2_3)_ -1
     a(1_2_3) c_e_con_hop_source_one(1_1)_ -1
     a(1_2_3) c_e_con_flow(1_1_3)_ -1
     a(1_2_3) c_u_con_sym_reverse(1)_ -3
     a(1_3_0) c_u_con_position_one(1_3)_ 1
     a(1_3_0) c_u_con_position_contiguous(1_2)_ 1
     a(1_3_0) c_u_con_position_contiguous(1_3)_ -1
     a(1_3_0) c_u_con_region_once(1_0)_ 1
     a(1_3_0) c_u_con_stages_min(1_0)_ 1
     a(1_3_0) c_u_con_stages_max(1_0)_ -3
     a(1_3_0) c_u_con_hop_source_le(1_3_0)_ -1
     a(1_3_0) c_e_con_hop_source_one(1_2)_ -1
     a(1_3_0) c_e_con_flow(1_2_0)_ 1
     a(1_3_1) c_u_con_position_one(1_3)_ 1
     a(1_3_1) c_u_con_position_contiguous(1_2)_ 1
     a(1_3_1) c_u_con_position_contiguous(1_3)_ -1
     a(1_3_1) c_u_con_region_once(1_1)_ 1
     a(1_3_1) c_u_con_stages_min(1_1)_ 1
     a(1_3_1) c_u_con_stages_max(1_1)_ -3
     a(1_3_1) c_u_con_hop_source_le(1_3_1)_ -1
     a(1_3_1) c_e_con_hop_source_one(1_2)_ -1
     a(1_3_1) c_e_con_flow(1_2_1)_ 1
     a(1_3_1) c_u_con_sym_reverse(1)_ -1
     a(1_3_2) c_u_con_position_one(1_3)_ 1
     a(1_3_2) c_u_con_position_contiguous(1_2)_ 1
     a(1_3_2) c_u_con_position_contiguous(1_3)_ -1
     a(1_3_2) c_u_con_region_once(1_2)_ 1
     a(1_3_2) c_u_con_stages_min(1_2)_ 1
     a(1_3_2) c_u_con_stages_max(1_2)_ -3
     a(1_3_2) c_u_con_hop_source_le(1_3_2)_ -1
     a(1_3_2) c_e_con_hop_source_one(1_2)_ -1
     a(1_3_2) c_e_con_flow(1_2_2)_ -1
     a(1_3_2) c_u_con_sym_reverse(1)_ -2
     a(1_3_3) c_u_con_position_one(1_3)_ 1
     a(1_3_3) c_u_con_position_contiguous(1_2)_ 1
     a(1_3_3) c_u_con_position_contiguous(1_3)_ -1
     a(1_3_3) c_u_con_region_once(1_3)_ 1
     a(1_3_3) c_u_con_stages_min(1_3)_ 1
     a(1_3_3) c_u_con_stages_max(1_3)_ -3
     a(1_3_3) c_u_con_hop_source_le(1_3_3)_ -1
     a(1_3_3) c_e_con_hop_source_one(1_2)_ -1
     a(1_3_3) c_e_con_flow(1_2_3)_ -1
     a(1_3_3) c_u_con_sym_reverse(1)_ -3
     a(1_4_0) c_u_con_position_one(1_4)_ 1
     a(1_4_0) c_u_con_position_contiguous(1_3)_ 1
     a(1_4_0) c_u_con_region_once(1_0)_ 1
     a(1_4_0) c_u_con_stages_min(1_0)_ 1
     a(1_4_0) c_u_con_stages_max(1_0)_ -3
     a(1_4_0) c_e_con_hop_source_one(1_3)_ -1
     a(1_4_0) c_e_con_flow(1_3_0)_ 1
     a(1_4_1) c_u_con_position_one(1_4)_ 1
     a(1_4_1) c_u_con_position_contiguous(1_3)_ 1
     a(1_4_1) c_u_con_region_once(1_1)_ 1
     a(1_4_1) c_u_con_stages_min(1_1)_ 1
     a(1_4_1) c_u_con_stages_max(1_1)_ -3
     a(1_4_1) c_e_con_hop_source_one(1_3)_ -1
     a(1_4_1) c_e_con_flow(1_3_1)_ 1
     a(1_4_1) c_u_con_sym_reverse(1)_ -1
     a(1_4_2) c_u_con_position_one(1_4)_ 1
     a(1_4_2) c_u_con_position_contiguous(1_3)_ 1
     a(1_4_2) c_u_con_region_once(1_2)_ 1
     a(1_4_2) c_u_con_stages_min(1_2)_ 1
     a(1_4_2) c_u_con_stages_max(1_2)_ -3
     a(1_4_2) c_e_con_hop_source_one(1_3)_ -1
     a(1_4_2) c_e_con_flow(1_3_2)_ -1
     a(1_4_2) c_u_con_sym_reverse(1)_ -2
     a(1_4_3) c_u_con_position_one(1_4)_ 1
     a(1_4_3) c_u_con_position_contiguous(1_3)_ 1
     a(1_4_3) c_u_con_region_once(1_3)_ 1
     a(1_4_3) c_u_con_stages_min(1_3)_ 1
     a(1_4_3) c_u_con_stages_max(1_3)_ -3
     a(1_4_3) c_e_con_hop_source_one(1_3)_ -1
     a(1_4_3) c_e_con_flow(1_3_3)_ -1
     a(1_4_3) c_u_con_sym_reverse(1)_ -3
     a(2_1_0) c_u_con_position_one(2_1)_ 1
     a(2_1_0) c_e_con_position_first(2)_ 1
     a(2_1_0) c_u_con_position_contiguous(2_1)_ -1
     a(2_1_0) c_u_con_region_once(2_0)_ 1
     a(2_1_0) c_u_con_stages_min(2_0)_ 1
     a(2_1_0) c_u_con_stages_max(2_0)_ -2
     a(2_1_0) c_u_con_hop_source_le(2_1_0)_ -1
     a(2_1_1) c_u_con_position_one(2_1)_ 1
     a(2_1_1) c_e_con_position_first(2)_ 1
     a(2_1_1) c_u_con_position_contiguous(2_1)_ -1
     a(2_1_1) c_u_con_region_once(2_1)_ 1
     a(2_1_1) c_u_con_stages_min(2_1)_ 1
     a(2_1_1) c_u_con_stages_max(2_1)_ -2
     a(2_1_1) c_u_con_hop_source_le(2_1_1)_ -1
     a(2_1_2) c_u_con_position_one(2_1)_ 1
     a(2_1_2) c_e_con_position_first(2)_ 1
     a(2_1_2) c_u_con_position_contiguous(2_1)_ -1
     a(2_1_2) c_u_con_region_once(2_2)_ 1
     a(2_1_2) c_u_con_stages_min(2_2)_ 1
     a(2_1_2) c_u_con_stages_max(2_2)_ -2
     a(2_1_2) c_u_con_hop_source_le(2_1_2)_ -1
     a(2_1_3) c_u_con_position_one(2_1)_ 1
     a(2_1_3) c_e_con_position_first(2)_ 1
     a(2_1_3) c_u_con_position_contiguous(2_1)_ -1
     a(2_1_3) c_u_con_region_once(2_3)_ 1
     a(2_1_3) c_u_con_stages_min(2_3)_ 1
     a(2_1_3) c_u_con_stages_max(2_3)_ -2
     a(2_1_3) c_u_con_hop_source_le(2_1_3)_ -1
     a(2_2_0) c_u_con_position_one(2_2)_ 1
     a(2_2_0) c_u_con_position_contiguous(2_1)_ 1
     a(2_2_0) c_u_con_region_once(2_0)_ 1
     a(2_2_0) c_u_con_stages_min(2_0)_ 1
     a(2_2_0) c_u_con_stages_max(2_0)_ -2
     a(2_2_0) c_e_con_hop_source_one(2_1)_ -1
     a(2_2_0) c_e_con_flow(2_1_0)_ -1
     a(2_2_1) c_u_con_position_one(2_2)_ 1
     a(2_2_1) c_u_con_position_contiguous(2_1)_ 1
     a(2_2_1) c_u_con_region_once(2_1)_ 1
     a(2_2_1) c_u_con_stages_min(2_1)_ 1
     a(2_2_1) c_u_con_stages_max(2_1)_ -2
     a(2_2_1) c_e_con_hop_source_one(2_1)_ -1
     a(2_2_1) c_e_con_flow(2_1_1)_ -1
     a(2_2_1) c_u_con_sym_reverse(2)_ -1
     a(2_2_2) c_u_con_position_one(2_2)_ 1
     a(2_2_2) c_u_con_position_contiguous(2_1)_ 1
     a(2_2_2) c_u_con_region_once(2_2)_ 1
     a(2_2_2) c_u_con_stages_min(2_2)_ 1
     a(2_2_2) c_u_con_stages_max(2_2)_ -2
     a(2_2_2) c_e_con_hop_source_one(2_1)_ -1
     a(2_2_2) c_e_con_flow(2_1_2)_ -1
     a(2_2_2) c_u_con_sym_reverse(2)_ -2
     a(2_2_3) c_u_con_position_one(2_2)_ 1
     a(2_2_3) c_u_con_position_contiguous(2_1)_ 1
     a(2_2_3) c_u_con_region_once(2_3)_ 1
     a(2_2_3) c_u_con_stages_min(2_3)_ 1
     a(2_2_3) c_u_con_stages_max(2_3)_ -2
     a(2_2_3) c_e_con_hop_source_one(2_1)_ -1
     a(2_2_3) c_e_con_flow(2_1_3)_ -1
     a(2_2_3) c_u_con_sym_reverse(2)_ -3
     n(0_0_0) c_e_con_stages_total(0)_ 1
     n(0_0_0) c_u_con_stages_min(0_0)_ -1
     n(0_0_0) c_u_con_stages_max(0_0)_ 1
     n(0_0_0) c_u_con_gpus(0)_ 1
     n(0_0_0) c_u_con_cost_product(0_1_0)_ 8.3333333333333337e-06
     n(0_0_0) c_u_con_cost_product(0_2_0)_ 8.3333333333333337e-06
     n(0_0_0) c_u_con_cost_product(0_3_0)_ 8.3333333333333337e-06
     n(0_1_0) c_e_con_stages_total(0)_ 1
     n(0_1_0) c_u_con_stages_min(0_1)_ -1
     n(0_1_0) c_u_con_stages_max(0_1)_ 1
     n(0_1_0) c_u_con_gpus(1)_ 1
     n(0_1_0) c_u_con_cost_product(0_1_0)_ 9.9999999999999991e-06
     n(0_1_0) c_u_con_cost_product(0_2_0)_ 9.9999999999999991e-06
     n(0_1_0) c_u_con_cost_product(0_3_0)_ 9.9999999999999991e-06
     n(0_2_0) c_e_con_stages_total(0)_ 1
     n(0_2_0) c_u_con_stages_min(0_2)_ -1
     n(0_2_0) c_u_con_stages_max(0_2)_ 1
     n(0_2_0) c_u_con_gpus(2)_ 1
     n(0_2_0) c_u_con_cost_product(0_1_0)_ 1.2499999999999999e-05
     n(0_2_0) c_u_con_cost_product(0_2_0)_ 1.2499999999999999e-05
     n(0_2_0) c_u_con_cost_product(0_3_0)_ 1.2499999999999999e-05
     n(0_3_0) c_e_con_stages_total(0)_ 1
     n(0_3_0) c_u_con_stages_min(0_3)_ -1
     n(0_3_0) c_u_con_stages_max(0_3)_ 1
     n(0_3_0) c_u_con_gpus(3)_ 1
     n(0_3_0) c_u_con_cost_product(0_1_0)_ 1.6666666666666667e-05
     n(0_3_0) c_u_con_cost_product(0_2_0)_ 1.6666666666666667e-05
     n(0_3_0) c_u_con_cost_product(0_3_0)_ 1.6666666666666667e-05
     n(1_0_0) c_e_con_stages_total(1)_ 1
     n(1_0_0) c_u_con_stages_min(1_0)_ -1
     n(1_0_0) c_u_con_stages_max(1_0)_ 1
     n(1_0_0) c_u_con_gpus(0)_ 1
     n(1_0_0) c_u_con_cost_product(1_1_0)_ 8.3333333333333337e-06
     n(1_0_0) c_u_con_cost_product(1_2_0)_ 8.3333333333333337e-06
     n(1_0_0) c_u_con_cost_product(1_3_0)_ 8.3333333333333337e-06
     n(1_1_0) c_e_con_stages_total(1)_ 1
     n(1_1_0) c_u_con_stages_min(1_1)_ -1
     n(1_1_0) c_u_con_stages_max(1_1)_ 1
     n(1_1_0) c_u_con_gpus(1)_ 1
     n(1_1_0) c_u_con_cost_product(1_1_0)_ 9.9999999999999991e-06
     n(1_1_0) c_u_con_cost_product(1_2_0)_ 9.9999999999999991e-06
     n(1_1_0) c_u_con_cost_product(1_3_0)_ 9.9999999999999991e-06
     n(1_2_0) c_e_con_stages_total(1)_ 1
     n(1_2_0) c_u_con_stages_min(1_2)_ -1
     n(1_2_0) c_u_con_stages_max(1_2)_ 1
     n(1_2_0) c_u_con_gpus(2)_ 1
     n(1_2_0) c_u_con_cost_product(1_1_0)_ 1.2499999999999999e-05
     n(1_2_0) c_u_con_cost_product(1_2_0)_ 1.2499999999999999e-05
     n(1_2_0) c_u_con_cost_product(1_3_0)_ 1.2499999999999999e-05
     n(1_3_0) c_e_con_stages_total(1)_ 1
     n(1_3_0) c_u_con_stages_min(1_3)_ -1
     n(1_3_0) c_u_con_stages_max(1_3)_ 1
     n(1_3_0) c_u_con_gpus(3)_ 1
     n(1_3_0) c_u_con_cost_product(1_1_0)_ 1.6666666666666667e-05
     n(1_3_0) c_u_con_cost_product(1_2_0)_ 1.6666666666666667e-05
     n(1_3_0) c_u_con_cost_product(1_3_0)_ 1.6666666666666667e-05
     n(2_0_0) c_e_con_stages_total(2)_ 1
     n(2_0_0) c_u_con_stages_min(2_0)_ -1
     n(2_0_0) c_u_con_stages_max(2_0)_ 1
     n(2_0_0) c_u_con_gpus(0)_ 1
     n(2_0_0) c_u_con_cost_product(2_1_0)_ 8.3333333333333337e-06
     n(2_0_0) c_u_con_cost_product(2_1_1)_ 8.3333333333333337e-06
     n(2_0_0) c_u_con_cost_product(2_1_2)_ 8.3333333333333337e-06
     n(2_0_0) c_u_con_cost_product(2_1_3)_ 8.3333333333333337e-06
     n(2_0_0) c_u_con_cost_product(2_1_4)_ 8.3333333333333337e-06
     n(2_0_0) c_u_con_cost_product(2_1_5)_ 8.3333333333333337e-06
     n(2_1_0) c_e_con_stages_total(2)_ 1
     n(2_1_0) c_u_con_stages_min(2_1)_ -1
     n(2_1_0) c_u_con_stages_max(2_1)_ 1
     n(2_1_0) c_u_con_gpus(1)_ 1
     n(2_1_0) c_u_con_cost_product(2_1_0)_ 9.9999999999999991e-06
     n(2_1_0) c_u_con_cost_product(2_1_1)_ 9.9999999999999991e-06
     n(2_1_0) c_u_con_cost_product(2_1_2)_ 9.9999999999999991e-06
     n(2_1_0) c_u_con_cost_product(2_1_3)_ 9.9999999999999991e-06
     n(2_1_0) c_u_con_cost_product(2_1_4)_ 9.9999999999999991e-06
     n(2_1_0) c_u_con_cost_product(2_1_5)_ 9.9999999999999991e-06
     n(2_2_0) c_e_con_stages_total(2)_ 1
     n(2_2_0) c_u_con_stages_min(2_2)_ -1
     n(2_2_0) c_u_con_stages_max(2_2)_ 1
     n(2_2_0) c_u_con_gpus(2)_ 1
     n(2_2_0) c_u_con_cost_product(2_1_0)_ 1.2499999999999999e-05
     n(2_2_0) c_u_con_cost_product(2_1_1)_ 1.2499999999999999e-05
     n(2_2_0) c_u_con_cost_product(2_1_2)_ 1.2499999999999999e-05
     n(2_2_0) c_u_con_cost_product(2_1_3)_ 1.2499999999999999e-05
     n(2_2_0) c_u_con_cost_product(2_1_4)_ 1.2499999999999999e-05
     n(2_2_0) c_u_con_cost_product(2_1_5)_ 1.2499999999999999e-05
     n(2_3_0) c_e_con_stages_total(2)_ 1
     n(2_3_0) c_u_con_stages_min(2_3)_ -1
     n(2_3_0) c_u_con_stages_max(2_3)_ 1
     n(2_3_0) c_u_con_gpus(3)_ 1
     n(2_3_0) c_u_con_cost_product(2_1_0)_ 1.6666666666666667e-05
     n(2_3_0) c_u_con_cost_product(2_1_1)_ 1.6666666666666667e-05
     n(2_3_0) c_u_con_cost_product(2_1_2)_ 1.6666666666666667e-05
     n(2_3_0) c_u_con_cost_product(2_1_3)_ 1.6666666666666667e-05
     n(2_3_0) c_u_con_cost_product(2_1_4)_ 1.6666666666666667e-05
     n(2_3_0) c_u_con_cost_product(2_1_5)_ 1.6666666666666667e-05
     h(0_1_0) c_u_con_hop_source_le(0_1_0)_ 1
     h(0_1_0) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_0) c_e_con_flow(0_1_0)_ -1
     h(0_1_1) c_u_con_hop_source_le(0_1_1)_ 1
     h(0_1_1) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_1) c_e_con_flow(0_1_1)_ -1
     h(0_1_1) c_u_con_sym_reverse(0)_ 1
     h(0_1_2) c_u_con_hop_source_le(0_1_2)_ 1
     h(0_1_2) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_2) c_e_con_flow(0_1_2)_ 1
     h(0_1_2) c_u_con_sym_reverse(0)_ 2
     h(0_1_3) c_u_con_hop_source_le(0_1_3)_ 1
     h(0_1_3) c_e_con_hop_source_one(0_1)_ 1
     h(0_1_3) c_e_con_flow(0_1_3)_ 1
     h(0_1_3) c_u_con_sym_reverse(0)_ 3
     h(0_2_0) c_u_con_hop_source_le(0_2_0)_ 1
     h(0_2_0) c_e_con_hop_source_one(0_2)_ 1
     h(0_2_0) c_e_con_flow(0_2_0)_ -1
     h(0_2_1) c_u_con_hop_source_le(0_2_1)_ 1
     h(0_2_1) c_e_con_hop_source_one(0_2)_ 1
     h(0_2_1) c_e_con_flow(0_2_1)_ -1
     h(0_2_1) c_u_con_sym_reverse(0)_ 1
     h(0_2_2) c_u_con_hop_source_le(0_2_2)_ 1
     h(0_2_2) c_e_con_hop_source_one(0_2)_ 1
     h(0_2_2) c_e_con_flow(0_2_2)_ 1
     h(0_2_2) c_u_con_sym_reverse(0)_ 2
     h(0_2_3) c_u_con_hop_source_le(0_2_3)_ 1
     h(0_2_3) c_e_con_hop_source_one(0_2)_ 1
     h(0_2_3) c_e_con_flow(0_2_3)_ 1
     h(0_2_3) c_u_con_sym_reverse(0)_ 3
     h(0_3_0) c_u_con_hop_source_le(0_3_0)_ 1
     h(0_3_0) c_e_con_hop_source_one(0_3)_ 1
     h(0_3_0) c_e_con_flow(0_3_0)_ -1
     h(0_3_1) c_u_con_hop_source_le(0_3_1)_ 1
     h(0_3_1) c_e_con_hop_source_one(0_3)_ 1
     h(0_3_1) c_e_con_flow(0_3_1)_ -1
     h(0_3_1) c_u_con_sym_reverse(0)_ 1
     h(0_3_2) c_u_con_hop_source_le(0_3_2)_ 1
     h(0_3_2) c_e_con_hop_source_one(0_3)_ 1
     h(0_3_2) c_e_con_flow(0_3_2)_ 1
     h(0_3_2) c_u_con_sym_reverse(0)_ 2
     h(0_3_3) c_u_con_hop_source_le(0_3_3)_ 1
     h(0_3_3) c_e_con_hop_source_one(0_3)_ 1
     h(0_3_3) c_e_con_flow(0_3_3)_ 1
     h(0_3_3) c_u_con_sym_reverse(0)_ 3
     h(1_1_0) c_u_con_hop_source_le(1_1_0)_ 1
     h(1_1_0) c_e_con_hop_source_one(1_1)_ 1
     h(1_1_0) c_e_con_flow(1_1_0)_ -1
     h(1_1_1) c_u_con_hop_source_le(1_1_1)_ 1
     h(1_1_1) c_e_con_hop_source_one(1_1)_ 1
     h(1_1_1) c_e_con_flow(1_1_1)_ -1
     h(1_1_1) c_u_con_sym_reverse(1)_ 1
     h(1_1_2) c_u_con_hop_source_le(1_1_2)_ 1
     h(1_1_2) c_e_con_hop_source_one(1_1)_ 1
     h(1_1_2) c_e_con_flow(1_1_2)_ 1
     h(1_1_2) c_u_con_sym_reverse(1)_ 2
     h(1_1_3) c_u_con_hop_source_le(1_1_3)_ 1
     h(1_1_3) c_e_con_hop_source_one(1_1)_ 1
     h(1_1_3) c_e_con_flow(1_1_3)_ 1
     h(1_1_3) c_u_con_sym_reverse(1)_ 3
     h(1_2_0) c_u_con_hop_source_le(1_2_0)_ 1
     h(1_2_0) c_e_con_hop_source_one(1_2)_ 1
     h(1_2_0) c_e_con_flow(1_2_0)_ -1
     h(1_2_1) c_u_con_hop_source_le(1_2_1)_ 1
     h(1_2_1) c_e_con_hop_source_one(1_2)_ 1
     h(1_2_1) c_e_con_flow(1_2_1)_ -1
     h(1_2_1) c_u_con_sym_reverse(1)_ 1
     h(1_2_2) c_u_con_hop_source_le(1_2_2)_ 1
     h(1_2_2) c_e_con_hop_source_one(1_2)_ 1
     h(1_2_2) c_e_con_flow(1_2_2)_ 1
     h(1_2_2) c_u_con_sym_reverse(1)_ 2
     h(1_2_3) c_u_con_hop_source_le(1_2_3)_ 1
     h(1_2_3) c_e_con_hop_source_one(1_2)_ 1
     h(1_2_3) c_e_con_flow(1_2_3)_ 1
     h(1_2_3) c_u_con_sym_reverse(1)_ 3
     h(1_3_0) c_u_con_hop_source_le(1_3_0)_ 1
     h(1_3_0) c_e_con_hop_source_one(1_3)_ 1
     h(1_3_0) c_e_con_flow(1_3_0)_ -1
     h(1_3_1) c_u_con_hop_source_le(1_3_1)_ 1
     h(1_3_1) c_e_con_hop_source_one(1_3)_ 1
     h(1_3_1) c_e_con_flow(1_3_1)_ -1
     h(1_3_1) c_u_con_sym_reverse(1)_ 1
     h(1_3_2) c_u_con_hop_source_le(1_3_2)_ 1
     h(1_3_2) c_e_con_hop_source_one(1_3)_ 1
     h(1_3_2) c_e_con_flow(1_3_2)_ 1
     h(1_3_2) c_u_con_sym_reverse(1)_ 2
     h(1_3_3) c_u_con_hop_source_le(1_3_3)_ 1
     h(1_3_3) c_e_con_hop_source_one(1_3)_ 1
     h(1_3_3) c_e_con_flow(1_3_3)_ 1
     h(1_3_3) c_u_con_sym_reverse(1)_ 3
     h(2_1_0) c_u_con_hop_source_le(2_1_0)_ 1
     h(2_1_0) c_e_con_hop_source_one(2_1)_ 1
     h(2_1_0) c_e_con_flow(2_1_0)_ 1
     h(2_1_1) c_u_con_hop_source_le(2_1_1)_ 1
     h(2_1_1) c_e_con_hop_source_one(2_1)_ 1
     h(2_1_1) c_e_con_flow(2_1_1)_ 1
     h(2_1_1) c_u_con_sym_reverse(2)_ 1
     h(2_1_2) c_u_con_hop_source_le(2_1_2)_ 1
     h(2_1_2) c_e_con_hop_source_one(2_1)_ 1
     h(2_1_2) c_e_con_flow(2_1_2)_ 1
     h(2_1_2) c_u_con_sym_reverse(2)_ 2
     h(2_1_3) c_u_con_hop_source_le(2_1_3)_ 1
     h(2_1_3) c_e_con_hop_source_one(2_1)_ 1
     h(2_1_3) c_e_con_flow(2_1_3)_ 1
     h(2_1_3) c_u_con_sym_reverse(2)_ 3
     f(0_1_0_0) c_e_con_flow(0_1_0)_ 1
     f(0_1_0_0) c_e_con_flow(0_1_1)_ -1
     f(0_1_0_0) c_u_con_link_once(0_1_0)_ 1
     f(0_1_0_0) c_u_con_bandwidth(0)_ 4
     f(0_1_0_0) c_u_con_cost_product(0_1_0)_ 6.2500000000000001e-05
     f(0_1_0_0) c_u_con_cost_product_min(0_1_0)_ 3.4999999999999997e-05
     f(0_1_0_1) c_e_con_flow(0_1_0)_ -1
     f(0_1_0_1) c_e_con_flow(0_1_1)_ 1
     f(0_1_0_1) c_u_con_link_once(0_1_0)_ 1
     f(0_1_0_1) c_u_con_bandwidth(0)_ 4
     f(0_1_0_1) c_u_con_cost_product(0_1_0)_ 6.2500000000000001e-05
     f(0_1_0_1) c_u_con_cost_product_min(0_1_0)_ 3.4999999999999997e-05
     f(0_2_0_0) c_e_con_flow(0_2_0)_ 1
     f(0_2_0_0) c_e_con_flow(0_2_1)_ -1
     f(0_2_0_0) c_u_con_link_once(0_2_0)_ 1
     f(0_2_0_0) c_u_con_bandwidth(0)_ 4
     f(0_2_0_0) c_u_con_cost_product(0_2_0)_ 6.2500000000000001e-05
     f(0_2_0_0) c_u_con_cost_product_min(0_2_0)_ 3.4999999999999997e-05
     f(0_2_0_1) c_e_con_flow(0_2_0)_ -1
     f(0_2_0_1) c_e_con_flow(0_2_1)_ 1
     f(0_2_0_1) c_u_con_link_once(0_2_0)_ 1
     f(0_2_0_1) c_u_con_bandwidth(0)_ 4
     f(0_2_0_1) c_u_con_cost_product(0_2_0)_ 6.2500000000000001e-05
     f(0_2_0_1) c_u_con_cost_product_min(0_2_0)_ 3.4999999999999997e-05
     f(0_3_0_0) c_e_con_flow(0_3_0)_ 1
     f(0_3_0_0) c_e_con_flow(0_3_1)_ -1
     f(0_3_0_0) c_u_con_link_once(0_3_0)_ 1
     f(0_3_0_0) c_u_con_bandwidth(0)_ 4
     f(0_3_0_0) c_u_con_cost_product(0_3_0)_ 6.2500000000000001e-05
     f(0_3_0_0) c_u_con_cost_product_min(0_3_0)_ 3.4999999999999997e-05
     f(0_3_0_1) c_e_con_flow(0_3_0)_ -1
     f(0_3_0_1) c_e_con_flow(0_3_1)_ 1
     f(0_3_0_1) c_u_con_link_once(0_3_0)_ 1
     f(0_3_0_1) c_u_con_bandwidth(0)_ 4
     f(0_3_0_1) c_u_con_cost_product(0_3_0)_ 6.2500000000000001e-05
     f(0_3_0_1) c_u_con_cost_product_min(0_3_0)_ 3.4999999999999997e-05
     f(1_1_0_0) c_e_con_flow(1_1_0)_ 1
     f(1_1_0_0) c_e_con_flow(1_1_1)_ -1
     f(1_1_0_0) c_u_con_link_once(1_1_0)_ 1
     f(1_1_0_0) c_u_con_bandwidth(0)_ 4
     f(1_1_0_0) c_u_con_cost_product(1_1_0)_ 6.2500000000000001e-05
     f(1_1_0_0) c_u_con_cost_product_min(1_1_0)_ 3.4999999999999997e-05
     f(1_1_0_1) c_e_con_flow(1_1_0)_ -1
     f(1_1_0_1) c_e_con_flow(1_1_1)_ 1
     f(1_1_0_1) c_u_con_link_once(1_1_0)_ 1
     f(1_1_0_1) c_u_con_bandwidth(0)_ 4
     f(1_1_0_1) c_u_con_cost_product(1_1_0)_ 6.2500000000000001e-05
     f(1_1_0_1) c_u_con_cost_product_min(1_1_0)_ 3.4999999999999997e-05
     f(1_2_0_0) c_e_con_flow(1_2_0)_ 1
     f(1_2_0_0) c_e_con_flow(1_2_1)_ -1
     f(1_2_0_0) c_u_con_link_once(1_2_0)_ 1
     f(1_2_0_0) c_u_con_bandwidth(0)_ 4
     f(1_2_0_0) c_u_con_cost_product(1_2_0)_ 6.2500000000000001e-05
     f(1_2_0_0) c_u_con_cost_product_min(1_2_0)_ 3.4999999999999997e-05
     f(1_2_0_1) c_e_con_flow(1_2_0)_ -1
     f(1_2_0_1) c_e_con_flow(1_2_1)_ 1
     f(1_2_0_1) c_u_con_link_once(1_2_0)_ 1
     f(1_2_0_1) c_u_con_bandwidth(0)_ 4
     f(1_2_0_1) c_u_con_cost_product(1_2_0)_ 6.2500000000000001e-05
     f(1_2_0_1) c_u_con_cost_product_min(1_2_0)_ 3.4999999999999997e-05
     f(1_3_0_0) c_e_con_flow(1_3_0)_ 1
     f(1_3_0_0) c_e_con_flow(1_3_1)_ -1
     f(1_3_0_0) c_u_con_link_once(1_3_0)_ 1
     f(1_3_0_0) c_u_con_bandwidth(0)_ 4
     f(1_3_0_0) c_u_con_cost_product(1_3_0)_ 6.2500000000000001e-05
     f(1_3_0_0) c_u_con_cost_product_min(1_3_0)_ 3.4999999999999997e-05
     f(1_3_0_1) c_e_con_flow(1_3_0)_ -1
     f(1_3_0_1) c_e_con_flow(1_3_1)_ 1
     f(1_3_0_1) c_u_con_link_once(1_3_0)_ 1
     f(1_3_0_1) c_u_con_bandwidth(0)_ 4
     f(1_3_0_1) c_u_con_cost_product(1_3_0)_ 6.2500000000000001e-05
     f(1_3_0_1) c_u_con_cost_product_min(1_3_0)_ 3.4999999999999997e-05
     f(2_1_0_0) c_e_con_flow(2_1_0)_ -1
     f(2_1_0_0) c_e_con_flow(2_1_1)_ 1
     f(2_1_0_0) c_u_con_flow_in(2_1_1)_ 1
     f(2_1_0_0) c_u_con_flow_out(2_1_0)_ 1
     f(2_1_0_0) c_u_con_link_once(2_1_0)_ 1
     f(2_1_0_0) c_u_con_bandwidth(0)_ 1
     f(2_1_0_0) c_u_con_cost_product(2_1_0)_ 3.3333333333333335e-05
     f(2_1_0_0) c_u_con_cost_product_min(2_1_0)_ 1.6666666666666667e-05
     f(2_1_0_1) c_e_con_flow(2_1_0)_ 1
     f(2_1_0_1) c_e_con_flow(2_1_1)_ -1
     f(2_1_0_1) c_u_con_flow_in(2_1_0)_ 1
     f(2_1_0_1) c_u_con_flow_out(2_1_1)_ 1
     f(2_1_0_1) c_u_con_link_once(2_1_0)_ 1
     f(2_1_0_1) c_u_con_bandwidth(0)_ 1
     f(2_1_0_1) c_u_con_cost_product(2_1_0)_ 3.3333333333333335e-05
     f(2_1_0_1) c_u_con_cost_product_min(2_1_0)_ 1.6666666666666667e-05
     f(2_1_1_0) c_e_con_flow(2_1_0)_ -1
     f(2_1_1_0) c_e_con_flow(2_1_2)_ 1
     f(2_1_1_0) c_u_con_flow_in(2_1_2)_ 1
     f(2_1_1_0) c_u_con_flow_out(2_1_0)_ 1
     f(2_1_1_0) c_u_con_link_once(2_1_1)_ 1
     f(2_1_1_0) c_u_con_bandwidth(1)_ 1
     f(2_1_1_0) c_u_con_cost_product(2_1_1)_ 3.3333333333333335e-05
     f(2_1_1_0) c_u_con_cost_product_min(2_1_1)_ 1.6666666666666667e-05
     f(2_1_1_1) c_e_con_flow(2_1_0)_ 1
     f(2_1_1_1) c_e_con_flow(2_1_2)_ -1
     f(2_1_1_1) c_u_con_flow_in(2_1_0)_ 1
     f(2_1_1_1) c_u_con_flow_out(2_1_2)_ 1
     f(2_1_1_1) c_u_con_link_once(2_1_1)_ 1
     f(2_1_1_1) c_u_con_bandwidth(1)_ 1
     f(2_1_1_1) c_u_con_cost_product(2_1_1)_ 3.3333333333333335e-05
     f(2_1_1_1) c_u_con_cost_product_min(2_1_1)_ 1.6666666666666667e-05
     f(2_1_2_0) c_e_con_flow(2_1_0)_ -1
     f(2_1_2_0) c_e_con_flow(2_1_3)_ 1
     f(2_1_2_0) c_u_con_flow_in(2_1_3)_ 1
     f(2_1_2_0) c_u_con_flow_out(2_1_0)_ 1
     f(2_1_2_0) c_u_con_link_once(2_1_2)_ 1
     f(2_1_2_0) c_u_con_bandwidth(2)_ 1
     f(2_1_2_0) c_u_con_cost_product(2_1_2)_ 3.3333333333333335e-05
     f(2_1_2_0) c_u_con_cost_product_min(2_1_2)_ 1.6666666666666667e-05
     f(2_1_2_1) c_e_con_flow(2_1_0)_ 1
     f(2_1_2_1) c_e_con_flow(2_1_3)_ -1
     f(2_1_2_1) c_u_con_flow_in(2_1_0)_ 1
     f(2_1_2_1) c_u_con_flow_out(2_1_3)_ 1
     f(2_1_2_1) c_u_con_link_once(2_1_2)_ 1
     f(2_1_2_1) c_u_con_bandwidth(2)_ 1
     f(2_1_2_1) c_u_con_cost_product(2_1_2)_ 3.3333333333333335e-05
     f(2_1_2_1) c_u_con_cost_product_min(2_1_2)_ 1.6666666666666667e-05
     f(2_1_3_0) c_e_con_flow(2_1_1)_ -1
     f(2_1_3_0) c_e_con_flow(2_1_2)_ 1
     f(2_1_3_0) c_u_con_flow_in(2_1_2)_ 1
     f(2_1_3_0) c_u_con_flow_out(2_1_1)_ 1
     f(2_1_3_0) c_u_con_link_once(2_1_3)_ 1
     f(2_1_3_0) c_u_con_bandwidth(3)_ 1
     f(2_1_3_0) c_u_con_cost_product(2_1_3)_ 3.3333333333333335e-05
     f(2_1_3_0) c_u_con_cost_product_min(2_1_3)_ 1.6666666666666667e-05
     f(2_1_3_1) c_e_con_flow(2_1_1)_ 1
     f(2_1_3_1) c_e_con_flow(2_1_2)_ -1
     f(2_1_3_1) c_u_con_flow_in(2_1_1)_ 1
     f(2_1_3_1) c_u_con_flow_out(2_1_2)_ 1
     f(2_1_3_1) c_u_con_link_once(2_1_3)_ 1
     f(2_1_3_1) c_u_con_bandwidth(3)_ 1
     f(2_1_3_1) c_u_con_cost_product(2_1_3)_ 3.3333333333333335e-05
     f(2_1_3_1) c_u_con_cost_product_min(2_1_3)_ 1.6666666666666667e-05
     f(2_1_4_0) c_e_con_flow(2_1_1)_ -1
     f(2_1_4_0) c_e_con_flow(2_1_3)_ 1
     f(2_1_4_0) c_u_con_flow_in(2_1_3)_ 1
     f(2_1_4_0) c_u_con_flow_out(2_1_1)_ 1
     f(2_1_4_0) c_u_con_link_once(2_1_4)_ 1
     f(2_1_4_0) c_u_con_bandwidth(4)_ 1
     f(2_1_4_0) c_u_con_cost_product(2_1_4)_ 3.3333333333333335e-05
     f(2_1_4_0) c_u_con_cost_product_min(2_1_4)_ 1.6666666666666667e-05
     f(2_1_4_1) c_e_con_flow(2_1_1)_ 1
     f(2_1_4_1) c_e_con_flow(2_1_3)_ -1
     f(2_1_4_1) c_u_con_flow_in(2_1_1)_ 1
     f(2_1_4_1) c_u_con_flow_out(2_1_3)_ 1
     f(2_1_4_1) c_u_con_link_once(2_1_4)_ 1
     f(2_1_4_1) c_u_con_bandwidth(4)_ 1
     f(2_1_4_1) c_u_con_cost_product(2_1_4)_ 3.3333333333333335e-05
     f(2_1_4_1) c_u_con_cost_product_min(2_1_4)_ 1.6666666666666667e-05
     f(2_1_5_0) c_e_con_flow(2_1_2)_ -1
     f(2_1_5_0) c_e_con_flow(2_1_3)_ 1
     f(2_1_5_0) c_u_con_flow_in(2_1_3)_ 1
     f(2_1_5_0) c_u_con_flow_out(2_1_2)_ 1
     f(2_1_5_0) c_u_con_link_once(2_1_5)_ 1
     f(2_1_5_0) c_u_con_bandwidth(5)_ 1
     f(2_1_5_0) c_u_con_cost_product(2_1_5)_ 3.3333333333333335e-05
     f(2_1_5_0) c_u_con_cost_product_min(2_1_5)_ 1.6666666666666667e-05
     f(2_1_5_1) c_e_con_flow(2_1_2)_ 1
     f(2_1_5_1) c_e_con_flow(2_1_3)_ -1
     f(2_1_5_1) c_u_con_flow_in(2_1_2)_ 1
     f(2_1_5_1) c_u_con_flow_out(2_1_3)_ 1
     f(2_1_5_1) c_u_con_link_once(2_1_5)_ 1
     f(2_1_5_1) c_u_con_bandwidth(5)_ 1
     f(2_1_5_1) c_u_con_cost_product(2_1_5)_ 3.3333333333333335e-05
     f(2_1_5_1) c_u_con_cost_product_min(2_1_5)_ 1.6666666666666667e-05
     q(0_1_0) c_u_con_cost_product(0_1_0)_ -1
     q(0_1_0) c_u_con_cost_product_min(0_1_0)_ -1
     q(0_2_0) c_u_con_cost_product(0_2_0)_ -1
     q(0_2_0) c_u_con_cost_product_min(0_2_0)_ -1
     q(0_3_0) c_u_con_cost_product(0_3_0)_ -1
     q(0_3_0) c_u_con_cost_product_min(0_3_0)_ -1
     q(1_1_0) c_u_con_cost_product(1_1_0)_ -1
     q(1_1_0) c_u_con_cost_product_min(1_1_0)_ -1
     q(1_2_0) c_u_con_cost_product(1_2_0)_ -1
     q(1_2_0) c_u_con_cost_product_min(1_2_0)_ -1
     q(1_3_0) c_u_con_cost_product(1_3_0)_ -1
     q(1_3_0) c_u_con_cost_product_min(1_3_0)_ -1
     q(2_1_0) c_u_con_cost_product(2_1_0)_ -1
     q(2_1_0) c_u_con_cost_product_min(2_1_0)_ -1
     q(2_1_1) c_u_con_cost_product(2_1_1)_ -1
     q(2_1_1) c_u_con_cost_product_min(2_1_1)_ -1
     q(2_1_2) c_u_con_cost_product(2_1_2)_ -1
     q(2_1_2) c_u_con_cost_product_min(2_1_2)_ -1
     q(2_1_3) c_u_con_cost_product(2_1_3)_ -1
     q(2_1_3) c_u_con_cost_product_min(2_1_3)_ -1
     q(2_1_4) c_u_con_cost_product(2_1_4)_ -1
     q(2_1_4) c_u_con_cost_product_min(2_1_4)_ -1
     q(2_1_5) c_u_con_cost_product(2_1_5)_ -1
     q(2_1_5) c_u_con_cost_product_min(2_1_5)_ -1
RHS
     RHS c_u_con_position_one(0_1)_ 1
     RHS c_u_con_position_one(0_2)_ 1
     RHS c_u_con_position_one(0_3)_ 1
     RHS c_u_con_position_one(0_4)_ 1
     RHS c_u_con_position_one(1_1)_ 1
     RHS c_u_con_position_one(1_2)_ 1
     RHS c_u_con_position_one(1_3)_ 1
     RHS c_u_con_position_one(1_4)_ 1
     RHS c_u_con_position_one(2_1)_ 1
     RHS c_u_con_position_one(2_2)_ 1
     RHS c_e_con_position_first(0)_ 0
     RHS c_e_con_position_first(1)_ 0
     RHS c_e_con_position_first(2)_ 0
     RHS c_u_con_position_contiguous(0_1)_ 0
     RHS c_u_con_position_contiguous(0_2)_ 0
     RHS c_u_con_position_contiguous(0_3)_ 0
     RHS c_u_con_position_contiguous(1_1)_ 0
     RHS c_u_con_position_contiguous(1_2)_ 0
     RHS c_u_con_position_contiguous(1_3)_ 0
     RHS c_u_con_position_contiguous(2_1)_ 0
     RHS c_u_con_region_once(0_0)_ 1
     RHS c_u_con_region_once(0_1)_ 1
     RHS c_u_con_region_once(0_2)_ 1
     RHS c_u_con_region_once(0_3)_ 1
     RHS c_u_con_region_once(1_0)_ 1
     RHS c_u_con_region_once(1_1)_ 1
     RHS c_u_con_region_once(1_2)_ 1
     RHS c_u_con_region_once(1_3)_ 1
     RHS c_u_con_region_once(2_0)_ 1
     RHS c_u_con_region_once(2_1)_ 1
     RHS c_u_con_region_once(2_2)_ 1
     RHS c_u_con_region_once(2_3)_ 1
     RHS c_e_con_stages_total(0)_ 0
     RHS c_e_con_stages_total(1)_ 0
     RHS c_e_con_stages_total(2)_ 0
     RHS c_u_con_stages_min(0_0)_ 0
     RHS c_u_con_stages_min(0_1)_ 0
     RHS c_u_con_stages_min(0_2)_ 0
     RHS c_u_con_stages_min(0_3)_ 0
     RHS c_u_con_stages_min(1_0)_ 0
     RHS c_u_con_stages_min(1_1)_ 0
     RHS c_u_con_stages_min(1_2)_ 0
     RHS c_u_con_stages_min(1_3)_ 0
     RHS c_u_con_stages_min(2_0)_ 0
     RHS c_u_con_stages_min(2_1)_ 0
     RHS c_u_con_stages_min(2_2)_ 0
     RHS c_u_con_stages_min(2_3)_ 0
     RHS c_u_con_stages_max(0_0)_ 0
     RHS c_u_con_stages_max(0_1)_ 0
     RHS c_u_con_stages_max(0_2)_ 0
     RHS c_u_con_stages_max(0_3)_ 0
     RHS c_u_con_stages_max(1_0)_ 0
     RHS c_u_con_stages_max(1_1)_ 0
     RHS c_u_con_stages_max(1_2)_ 0
     RHS c_u_con_stages_max(1_3)_ 0
     RHS c_u_con_stages_max(2_0)_ 0
     RHS c_u_con_stages_max(2_1)_ 0
     RHS c_u_con_stages_max(2_2)_ 0
     RHS c_u_con_stages_max(2_3)_ 0
     RHS c_u_con_hop_source_le(0_1_0)_ 0
     RHS c_u_con_hop_source_le(0_1_1)_ 0
     RHS c_u_con_hop_source_le(0_1_2)_ 0
     RHS c_u_con_hop_source_le(0_1_3)_ 0
     RHS c_u_con_hop_source_le(0_2_0)_ 0
     RHS c_u_con_hop_source_le(0_2_1)_ 0
     RHS c_u_con_hop_source_le(0_2_2)_ 0
     RHS c_u_con_hop_source_le(0_2_3)_ 0
     RHS c_u_con_hop_source_le(0_3_0)_ 0
     RHS c_u_con_hop_source_le(0_3_1)_ 0
     RHS c_u_con_hop_source_le(0_3_2)_ 0
     RHS c_u_con_hop_source_le(0_3_3)_ 0
     RHS c_u_con_hop_source_le(1_1_0)_ 0
     RHS c_u_con_hop_source_le(1_1_1)_ 0
     RHS c_u_con_hop_source_le(1_1_2)_ 0
     RHS c_u_con_hop_source_le(1_1_3)_ 0
     RHS c_u_con_hop_source_le(1_2_0)_ 0
     RHS c_u_con_hop_source_le(1_2_1)_ 0
     RHS c_u_con_hop_source_le(1_2_2)_ 0
     RHS c_u_con_hop_source_le(1_2_3)_ 0
     RHS c_u_con_hop_source_le(1_3_0)_ 0
     RHS c_u_con_hop_source_le(1_3_1)_ 0
     RHS c_u_con_hop_source_le(1_3_2)_ 0
     RHS c_u_con_hop_source_le(1_3_3)_ 0
     RHS c_u_con_hop_source_le(2_1_0)_ 0
     RHS c_u_con_hop_source_le(2_1_1)_ 0
     RHS c_u_con_hop_source_le(2_1_2)_ 0
     RHS c_u_con_hop_source_le(2_1_3)_ 0
     RHS c_e_con_hop_source_one(0_1)_ 0
     RHS c_e_con_hop_source_one(0_2)_ 0
     RHS c_e_con_hop_source_one(0_3)_ 0
     RHS c_e_con_hop_source_one(1_1)_ 0
     RHS c_e_con_hop_source_one(1_2)_ 0
     RHS c_e_con_hop_source_one(1_3)_ 0
     RHS c_e_con_hop_source_one(2_1)_ 0
     RHS c_e_con_flow(0_1_0)_ 0
     RHS c_e_con_flow(0_1_1)_ 0
     RHS c_e_con_flow(0_1_2)_ 0
     RHS c_e_con_flow(0_1_3)_ 0
     RHS c_e_con_flow(0_2_0)_ 0
     RHS c_e_con_flow(0_2_1)_ 0
     RHS c_e_con_flow(0_2_2)_ 0
     RHS c_e_con_flow(0_2_3)_ 0
     RHS c_e_con_flow(0_3_0)_ 0
     RHS c_e_con_flow(0_3_1)_ 0
     RHS c_e_con_flow(0_3_2)_ 0
     RHS c_e_con_flow(0_3_3)_ 0
     RHS c_e_con_flow(1_1_0)_ 0
     RHS c_e_con_flow(1_1_1)_ 0
     RHS c_e_con_flow(1_1_2)_ 0
     RHS c_e_con_flow(1_1_3)_ 0
     RHS c_e_con_flow(1_2_0)_ 0
     RHS c_e_con_flow(1_2_1)_ 0
     RHS c_e_con_flow(1_2_2)_ 0
     RHS c_e_con_flow(1_2_3)_ 0
     RHS c_e_con_flow(1_3_0)_ 0
     RHS c_e_con_flow(1_3_1)_ 0
     RHS c_e_con_flow(1_3_2)_ 0
     RHS c_e_con_flow(1_3_3)_ 0
     RHS c_e_con_flow(2_1_0)_ 0
     RHS c_e_con_flow(2_1_1)_ 0
     RHS c_e_con_flow(2_1_2)_ 0
     RHS c_e_con_flow(2_1_3)_ 0
     RHS c_u_con_flow_in(2_1_0)_ 1
     RHS c_u_con_flow_in(2_1_1)_ 1
     RHS c_u_con_flow_in(2_1_2)_ 1
     RHS c_u_con_flow_in(2_1_3)_ 1
     RHS c_u_con_flow_out(2_1_0)_ 1
     RHS c_u_con_flow_out(2_1_1)_ 1
     RHS c_u_con_flow_out(2_1_2)_ 1
     RHS c_u_con_flow_out(2_1_3)_ 1
     RHS c_u_con_link_once(0_1_0)_ 1
     RHS c_u_con_link_once(0_2_0)_ 1
     RHS c_u_con_link_once(0_3_0)_ 1
     RHS c_u_con_link_once(1_1_0)_ 1
     RHS c_u_con_link_once(1_2_0)_ 1
     RHS c_u_con_link_once(1_3_0)_ 1
     RHS c_u_con_link_once(2_1_0)_ 1
     RHS c_u_con_link_once(2_1_1)_ 1
     RHS c_u_con_link_once(2_1_2)_ 1
     RHS c_u_con_link_once(2_1_3)_ 1
     RHS c_u_con_link_once(2_1_4)_ 1
     RHS c_u_con_link_once(2_1_5)_ 1
     RHS c_u_con_gpus(0)_ 3
     RHS c_u_con_gpus(1)_ 3
     RHS c_u_con_gpus(2)_ 3
     RHS c_u_con_gpus(3)_ 3
     RHS c_u_con_bandwidth(0)_ 6
     RHS c_u_con_bandwidth(1)_ 2
     RHS c_u_con_bandwidth(2)_ 2
     RHS c_u_con_bandwidth(3)_ 2
     RHS c_u_con_bandwidth(4)_ 2
     RHS c_u_con_bandwidth(5)_ 2
     RHS c_u_con_cost_product(0_1_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(0_2_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(0_3_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(1_1_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(1_2_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(1_3_0)_ 6.2500000000000001e-05
     RHS c_u_con_cost_product(2_1_0)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product(2_1_1)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product(2_1_2)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product(2_1_3)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product(2_1_4)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product(2_1_5)_ 3.3333333333333335e-05
     RHS c_u_con_cost_product_min(0_1_0)_ 0
     RHS c_u_con_cost_product_min(0_2_0)_ 0
     RHS c_u_con_cost_product_min(0_3_0)_ 0
     RHS c_u_con_cost_product_min(1_1_0)_ 0
     RHS c_u_con_cost_product_min(1_2_0)_ 0
     RHS c_u_con_cost_product_min(1_3_0)_ 0
     RHS c_u_con_cost_product_min(2_1_0)_ 0
     RHS c_u_con_cost_product_min(2_1_1)_ 0
     RHS c_u_con_cost_product_min(2_1_2)_ 0
     RHS c_u_con_cost_product_min(2_1_3)_ 0
     RHS c_u_con_cost_product_min(2_1_4)_ 0
     RHS c_u_con_cost_product_min(2_1_5)_ 0
     RHS c_u_con_sym_reverse(0)_ 0
     RHS c_u_con_sym_reverse(1)_ 0
     RHS c_u_con_sym_reverse(2)_ 0
     RHS c_u_con_sym_jobs(0_1)_ 0
BOUNDS
 BV BOUND x(0)
 BV BOUND x(1)
 BV BOUND x(2)
 BV BOUND a(0_1_0)
 BV BOUND a(0_1_1)
 BV BOUND a(0_1_2)
 BV BOUND a(0_1_3)
 BV BOUND a(0_2_0)
 BV BOUND a(0_2_1)
 BV BOUND a(0_2_2)
 BV BOUND a(0_2_3)
 BV BOUND a(0_3_0)
 BV BOUND a(0_3_1)
 BV BOUND a(0_3_2)
 BV BOUND a(0_3_3)
 BV BOUND a(0_4_0)
 BV BOUND a(0_4_1)
 BV BOUND a(0_4_2)
 BV BOUND a(0_4_3)
 BV BOUND a(1_1_0)
 BV BOUND a(1_1_1)
 BV BOUND a(1_1_2)
 BV BOUND a(1_1_3)
 BV BOUND a(1_2_0)
 BV BOUND a(1_2_1)
 BV BOUND a(1_2_2)
 BV BOUND a(1_2_3)
 BV BOUND a(1_3_0)
 BV BOUND a(1_3_1)
 BV BOUND a(1_3_2)
 BV BOUND a(1_3_3)
 BV BOUND a(1_4_0)
 BV BOUND a(1_4_1)
 BV BOUND a(1_4_2)
 BV BOUND a(1_4_3)
 BV BOUND a(2_1_0)
 BV BOUND a(2_1_1)
 BV BOUND a(2_1_2)
 BV BOUND a(2_1_3)
 BV BOUND a(2_2_0)
 BV BOUND a(2_2_1)
 BV BOUND a(2_2_2)
 BV BOUND a(2_2_3)
 LI BOUND n(0_0_0) 0
 UI BOUND n(0_0_0) 3
 LI BOUND n(0_1_0) 0
 UI BOUND n(0_1_0) 3
 LI BOUND n(0_2_0) 0
 UI BOUND n(0_2_0) 3
 LI BOUND n(0_3_0) 0
 UI BOUND n(0_3_0) 3
 LI BOUND n(1_0_0) 0
 UI BOUND n(1_0_0) 3
 LI BOUND n(1_1_0) 0
 UI BOUND n(1_1_0) 3
 LI BOUND n(1_2_0) 0
 UI BOUND n(1_2_0) 3
 LI BOUND n(1_3_0) 0
 UI BOUND n(1_3_0) 3
 LI BOUND n(2_0_0) 0
 UI BOUND n(2_0_0) 2
 LI BOUND n(2_1_0) 0
 UI BOUND n(2_1_0) 2
 LI BOUND n(2_2_0) 0
 UI BOUND n(2_2_0) 2
 LI BOUND n(2_3_0) 0
 UI BOUND n(2_3_0) 2
 LO BOUND h(0_1_0) 0
 UP BOUND h(0_1_0) 1
 LO BOUND h(0_1_1) 0
 UP BOUND h(0_1_1) 1
 LO BOUND h(0_1_2) 0
 UP BOUND h(0_1_2) 1
 LO BOUND h(0_1_3) 0
 UP BOUND h(0_1_3) 1
 LO BOUND h(0_2_0) 0
 UP BOUND h(0_2_0) 1
 LO BOUND h(0_2_1) 0
 UP BOUND h(0_2_1) 1
 LO BOUND h(0_2_2) 0
 UP BOUND h(0_2_2) 1
 LO BOUND h(0_2_3) 0
 UP BOUND h(0_2_3) 1
 LO BOUND h(0_3_0) 0
 UP BOUND h(0_3_0) 1
 LO BOUND h(0_3_1) 0
 UP BOUND h(0_3_1) 1
 LO BOUND h(0_3_2) 0
 UP BOUND h(0_3_2) 1
 LO BOUND h(0_3_3) 0
 UP BOUND h(0_3_3) 1
 LO BOUND h(1_1_0) 0
 UP BOUND h(1_1_0) 1
 LO BOUND h(1_1_1) 0
 UP BOUND h(1_1_1) 1
 LO BOUND h(1_1_2) 0
 UP BOUND h(1_1_2) 1
 LO BOUND h(1_1_3) 0
 UP BOUND h(1_1_3) 1
 LO BOUND h(1_2_0) 0
 UP BOUND h(1_2_0) 1
 LO BOUND h(1_2_1) 0
 UP BOUND h(1_2_1) 1
 LO BOUND h(1_2_2) 0
 UP BOUND h(1_2_2) 1
 LO BOUND h(1_2_3) 0
 UP BOUND h(1_2_3) 1
 LO BOUND h(1_3_0) 0
 UP BOUND h(1_3_0) 1
 LO BOUND h(1_3_1) 0
 UP BOUND h(1_3_1) 1
 LO BOUND h(1_3_2) 0
 UP BOUND h(1_3_2) 1
 LO BOUND h(1_3_3) 0
 UP BOUND h(1_3_3) 1
 LO BOUND h(2_1_0) 0
 UP BOUND h(2_1_0) 1
 LO BOUND h(2_1_1) 0
 UP BOUND h(2_1_1) 1
 LO BOUND h(2_1_2) 0
 UP BOUND h(2_1_2) 1
 LO BOUND h(2_1_3) 0
 UP BOUND h(2_1_3) 1
 BV BOUND f(0_1_0_0)
 BV BOUND f(0_1_0_1)
 BV BOUND f(0_2_0_0)
 BV BOUND f(0_2_0_1)
 BV BOUND f(0_3_0_0)
 BV BOUND f(0_3_0_1)
 BV BOUND f(1_1_0_0)
 BV BOUND f(1_1_0_1)
 BV BOUND f(1_2_0_0)
 BV BOUND f(1_2_0_1)
 BV BOUND f(1_3_0_0)
 BV BOUND f(1_3_0_1)
 BV BOUND f(2_1_0_0)
 BV BOUND f(2_1_0_1)
 BV BOUND f(2_1_1_0)
 BV BOUND f(2_1_1_1)
 BV BOUND f(2_1_2_0)
 BV BOUND f(2_1_2_1)
 BV BOUND f(2_1_3_0)
 BV BOUND f(2_1_3_1)
 BV BOUND f(2_1_4_0)
 BV BOUND f(2_1_4_1)
 BV BOUND f(2_1_5_0)
 BV BOUND f(2_1_5_1)
 LO BOUND q(0_1_0) 0
 UP BOUND q(0_1_0) 6.2500000000000001e-05
 LO BOUND q(0_2_0) 0
 UP BOUND q(0_2_0) 6.2500000000000001e-05
 LO BOUND q(0_3_0) 0
 UP BOUND q(0_3_0) 6.2500000000000001e-05
 LO BOUND q(1_1_0) 0
 UP BOUND q(1_1_0) 6.2500000000000001e-05
 LO BOUND q(1_2_0) 0
 UP BOUND q(1_2_0) 6.2500000000000001e-05
 LO BOUND q(1_3_0) 0
 UP BOUND q(1_3_0) 6.2500000000000001e-05
 LO BOUND q(2_1_0) 0
 UP BOUND q(2_1_0) 3.3333333333333335e-05
 LO BOUND q(2_1_1) 0
 UP BOUND q(2_1_1) 3.3333333333333335e-05
 LO BOUND q(2_1_2) 0
 UP BOUND q(2_1_2) 3.3333333333333335e-05
 LO BOUND q(2_1_3) 0
 UP BOUND q(2_1_3) 3.3333333333333335e-05
 LO BOUND q(2_1_4) 0
 UP BOUND q(2_1_4) 3.3333333333333335e-05
 LO BOUND q(2_1_5) 0
 UP BOUND q(2_1_5) 3.3333333333333335e-05
ENDATA
